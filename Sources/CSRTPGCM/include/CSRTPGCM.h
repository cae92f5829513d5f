#ifndef TUTTI_CSRTPGCM_H
#define TUTTI_CSRTPGCM_H
#include <stdint.h>

/// SRTP with AEAD_AES_128_GCM (RFC 3711's key derivation, RFC 7714's packet protection) over OpenSSL's EVP,
/// with one cipher context per stream made at creation: protecting or verifying a packet allocates nothing
/// (libsrtp2 as Debian builds it calls NSS, which allocates on every packet). One context is one direction
/// of one SSRC; it is not thread-safe (one data thread uses it).
typedef struct tutti_srtp_gcm tutti_srtp_gcm;

/// Makes a context from the 28-byte master key and salt; `window` is the replay window in packets (a
/// receiver's; at most 32768). Returns NULL when OpenSSL refuses.
tutti_srtp_gcm *tutti_srtp_gcm_create(const uint8_t *master, uint32_t ssrc, uint32_t window);
void tutti_srtp_gcm_free(tutti_srtp_gcm *context);

/// Protects the RTP packet of `length` bytes in place (16 bytes of tag are appended: `capacity` must allow
/// them). Returns the new length, or -1 when the packet is not RTP of this SSRC or does not fit.
int tutti_srtp_gcm_protect(tutti_srtp_gcm *context, uint8_t *packet, int length, int capacity);

/// Verifies and decrypts the SRTP packet of `length` bytes in place. Returns the RTP packet's length, or
/// -1 when it fails authentication or is malformed (forged), -2 when it was seen before or is older than the
/// window (replayed).
int tutti_srtp_gcm_unprotect(tutti_srtp_gcm *context, uint8_t *packet, int length);

/// Tries a packet `tutti_srtp_gcm_unprotect` refused once more, for a stream back from a silence longer than
/// 2^15 packets (where RFC 3711's estimate of the roll-over counter, from sequence numbers alone, fails): the
/// counter is taken to be the one that puts the packet nearest where its RTP timestamp says it is (the newest
/// packet's index plus the timestamps' difference in packets of `frames`, ahead or behind; right for a
/// silence up to 2^31 samples, 12 hours at 48 kHz). A packet sent before the silence and held back past it
/// is so placed behind the replay window (-2) rather than taken for a forgery. Returns as
/// `tutti_srtp_gcm_unprotect`, or -3 when that estimate is the one already tried (nothing was done: an
/// ordinary gap or late packet, no timestamp seen since creation or placing, or `frames` 0). A forged
/// timestamp costs one more decryption attempt, never a false acceptance.
int tutti_srtp_gcm_unprotect_by_timestamp(tutti_srtp_gcm *context, uint8_t *packet, int length, uint32_t frames);

/// Carries the stream's position from `from` into `to` (a context made for the stream's next key): the
/// roll-over counter, the highest sequence number, the replay window and the last sequence number sent. After
/// it, `to` protects or verifies the packets that follow as `from` would have, under its own key. Both
/// contexts must have the same window; the thread that uses `from` calls it.
void tutti_srtp_gcm_adopt(tutti_srtp_gcm *to, const tutti_srtp_gcm *from);

/// A sender's position: the index (roll-over counter × 65536 + sequence number) of the last packet it
/// protected, or 0 before the first. The thread that protects calls it.
uint64_t tutti_srtp_gcm_sent_index(const tutti_srtp_gcm *context);

/// Places a receiver's fresh context at the sender's `index` (what the sender's `tutti_srtp_gcm_sent_index`
/// said): the roll-over counter is taken from it rather than estimated, so a stream that resumes after more
/// than 2^15 packets of silence (when RFC 3711's estimate fails) opens again. The replay window starts empty.
void tutti_srtp_gcm_place(tutti_srtp_gcm *context, uint64_t index);

#endif
