import TuttiCore
import TuttiEngine
import TuttiSRTP
import TuttiSession
import TuttiWire

/// A live SRTP stream's key changed without a lost packet (issue 14): the sender gives the receiver the next
/// key over the encrypted control channel; the receiver stages it (it opens packets under either key, and
/// switches at the first under the new one); only when the receiver has answered does the sender send under
/// it. A re-key that fails leaves the stream on its current key. Control plane (the actor).
extension Peer {
    /// Sender: gives connection `id`'s receiver at `endpoint` the next key, then sends under it.
    func rekey(_ id: ConnectionID, with key: SRTPMasterKey, at endpoint: ControlEndpoint, because reason: ConnectionLifecycle.RekeyReason)
        async
    {
        let notice = RekeyNotice(
            connectionID: id, mediaKey: MediaKeying(suite: key.suite.rawValue, key: key.bytes),
            senderIndex: sending[id]?.connection.srtpSentIndex)
        let failure: String
        do {
            let reply = try await environment.transport.reply(to: .rekey(notice), fromAnyOf: [endpoint], timeout: .seconds(2))
            switch reply.response {
            case .done:
                // Gone meanwhile: nothing to switch.
                guard let connection = sending[id]?.connection else { return }
                do throws(EngineError) {
                    try connection.stageMediaKey(key)
                    logger.info("connection \(id): a new SRTP key (\(reason.rawValue))")
                    return
                } catch {
                    failure = error.message
                }
            case .failure(let refusal): failure = refusal.message
            default: failure = "it answered with \(reply.response.typeName)"
            }
        } catch {
            failure = "\(error)"
        }
        failedRekeys += 1
        if failedRekeys <= 10 || failedRekeys % 100 == 0 {
            logger.warning(
                "connection \(id): could not give the receiver a new SRTP key (\(reason.rawValue)); the stream keeps its key: \(failure)")
        }
    }

    /// Receiver: stages the next key of a stream this peer receives (`rekey` from its sender). Only the
    /// connection's sender gets here in a members-only session (`ConnectionLifecycle.refusal`).
    func stageIncomingKey(_ notice: RekeyNotice) -> ControlResponse {
        guard let connection = receiving[notice.connectionID]?.connection else {
            return .failure(ControlFailure(.notFound, "peer \(name) receives no connection \(notice.connectionID)"))
        }
        guard let bytes = notice.mediaKey.keyBytes, let key = SRTPMasterKey(suite: .aeadAES128GCM, bytes: bytes) else {
            return .failure(ControlFailure(.malformed, "the new key is not an AEAD_AES_128_GCM key"))
        }
        do throws(EngineError) {
            try connection.stageMediaKey(key, senderIndex: notice.senderIndex)
            return .done
        } catch {
            return .failure(ControlFailure(.forbidden, error.message))
        }
    }
}
