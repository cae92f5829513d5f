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

#endif
