// The PCM payload's sample loops (RFC 3551/3190 L16 and L24: signed, big-endian, interleaved) in C, where
// SSE2's packed conversion rounds four samples at once (ties to even, as `SampleQuantization.integer` does) on
// any x86-64; elsewhere the same arithmetic one sample at a time. Pure functions: no state, no allocation, no
// system call. Realtime-safe: yes. Thread-safe: yes.
#ifndef CPCMKERNELS_H
#define CPCMKERNELS_H

#include <stddef.h>
#include <stdint.h>

/// Writes `count` samples of `samples` to `payload` (`count` × 3 bytes) as L24: each one times 2²³, rounded
/// to the nearest integer (ties to even), clamped to [−2²³, 2²³ − 1]; NaN is 0.
void tutti_pcm_encode_l24(const float *samples, size_t count, uint8_t *payload);

/// Writes `count` samples as L16 (`count` × 2 bytes): times 2¹⁵, rounded, clamped to [−2¹⁵, 2¹⁵ − 1]; NaN is 0.
void tutti_pcm_encode_l16(const float *samples, size_t count, uint8_t *payload);

/// Reads `count` L24 samples from `payload` (`count` × 3 bytes) into `samples`, each divided by 2²³.
void tutti_pcm_decode_l24(const uint8_t *payload, size_t count, float *samples);

/// Reads `count` L16 samples from `payload` (`count` × 2 bytes) into `samples`, each divided by 2¹⁵.
void tutti_pcm_decode_l16(const uint8_t *payload, size_t count, float *samples);

#endif
