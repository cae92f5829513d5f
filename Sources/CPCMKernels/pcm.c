#include "CPCMKernels.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

/* One sample: NaN is 0, then clamped and rounded to the nearest integer, ties to even. Clamping before rounding
   gives the same integer as rounding first: the bounds are integers. */
static inline int32_t quantize(float sample, float scale, float maximum) {
    if (sample != sample) return 0;
    float scaled = sample * scale;
    if (scaled >= maximum) return (int32_t)maximum;
    if (scaled <= -scale) return (int32_t)-scale;
    return (int32_t)lrintf(scaled); /* the default rounding mode: to nearest, ties to even */
}

#ifdef HAVE_SSE2
/* Four samples: NaN lanes to 0 (an unordered compare as a mask), clamped, converted with the rounding mode
   (to nearest, ties to even; denormals-are-zero, which a host may set on an audio thread, changes nothing: a
   denormal times 2²³ rounds to 0 either way). */
static inline __m128i quantize4(const float *samples, __m128 scale, __m128 maximum, __m128 minimum) {
    __m128 x = _mm_loadu_ps(samples);
    x = _mm_and_ps(x, _mm_cmpord_ps(x, x));
    x = _mm_max_ps(_mm_min_ps(_mm_mul_ps(x, scale), maximum), minimum);
    return _mm_cvtps_epi32(x);
}
#endif

static inline void store_be24(uint8_t *to, int32_t value) {
    to[0] = (uint8_t)(value >> 16);
    to[1] = (uint8_t)(value >> 8);
    to[2] = (uint8_t)value;
}

/* Four bytes, big-endian, of value << 8: the sample's three bytes and one the next store overwrites. */
static inline void store_be24_wide(uint8_t *to, int32_t value) {
    uint32_t word = __builtin_bswap32((uint32_t)value << 8);
    memcpy(to, &word, 4);
}

void tutti_pcm_encode_l24(const float *samples, size_t count, uint8_t *payload) {
    size_t index = 0;
#ifdef HAVE_SSE2
    const __m128 scale = _mm_set1_ps(8388608.0f), maximum = _mm_set1_ps(8388607.0f), minimum = _mm_set1_ps(-8388608.0f);
    /* Four at a time while a fifth sample follows (the wide store of the fourth spills into its first byte). */
    for (; index + 5 <= count; index += 4) {
        int32_t values[4];
        _mm_storeu_si128((__m128i *)values, quantize4(samples + index, scale, maximum, minimum));
        for (int lane = 0; lane < 4; lane++) store_be24_wide(payload + 3 * (index + lane), values[lane]);
    }
#endif
    for (; index < count; index++) store_be24(payload + 3 * index, quantize(samples[index], 8388608.0f, 8388607.0f));
}

void tutti_pcm_encode_l16(const float *samples, size_t count, uint8_t *payload) {
    size_t index = 0;
#ifdef HAVE_SSE2
    const __m128 scale = _mm_set1_ps(32768.0f), maximum = _mm_set1_ps(32767.0f), minimum = _mm_set1_ps(-32768.0f);
    for (; index + 8 <= count; index += 8) {
        /* Eight samples packed to 16 bits with signed saturation (already in range), bytes swapped. */
        __m128i low = quantize4(samples + index, scale, maximum, minimum);
        __m128i high = quantize4(samples + index + 4, scale, maximum, minimum);
        __m128i packed = _mm_packs_epi32(low, high);
        packed = _mm_or_si128(_mm_slli_epi16(packed, 8), _mm_srli_epi16(packed, 8));
        _mm_storeu_si128((__m128i *)(payload + 2 * index), packed);
    }
#endif
    for (; index < count; index++) {
        int32_t value = quantize(samples[index], 32768.0f, 32767.0f);
        payload[2 * index] = (uint8_t)(value >> 8);
        payload[2 * index + 1] = (uint8_t)value;
    }
}

void tutti_pcm_decode_l24(const uint8_t *payload, size_t count, float *samples) {
    const float unit = 1.0f / 8388608.0f;
    size_t index = 0;
    /* A 4-byte load a sample while a next sample follows (its first byte is masked off). */
    for (; index + 1 < count; index++) {
        uint32_t word;
        memcpy(&word, payload + 3 * index, 4);
        samples[index] = (float)((int32_t)(__builtin_bswap32(word) & 0xFFFFFF00u) >> 8) * unit;
    }
    for (; index < count; index++) {
        const uint8_t *from = payload + 3 * index;
        uint32_t word = (uint32_t)from[0] << 24 | (uint32_t)from[1] << 16 | (uint32_t)from[2] << 8;
        samples[index] = (float)((int32_t)word >> 8) * unit;
    }
}

void tutti_pcm_decode_l16(const uint8_t *payload, size_t count, float *samples) {
    const float unit = 1.0f / 32768.0f;
    for (size_t index = 0; index < count; index++) {
        int16_t value = (int16_t)((uint16_t)payload[2 * index] << 8 | payload[2 * index + 1]);
        samples[index] = (float)value * unit;
    }
}
