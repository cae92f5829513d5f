#include "CNearUnity.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef float v8 __attribute__((vector_size(32), aligned(4)));

struct tutti_near_unity {
    unsigned channels;
    unsigned half;      /* taps a side */
    unsigned taps;      /* 2 × half, a multiple of 8 */
    unsigned phases;
    /* Row k (0 ≤ k < phases): the taps at fractional position k / phases, then the difference to row k + 1. */
    float *table;
    /* Per channel, `capacity` frames of input history, frame f of channel c at history[c × capacity + f]. */
    float *history;
    unsigned capacity;
    unsigned filled;    /* frames written to the history */
    double position;    /* the next output frame's position in the history, in frames */
    double step;        /* input frames per output frame now */
    double target;      /* where `step` glides to */
    double glide;       /* the glide's coefficient per output frame (1: at once) */
    void (*kernel)(struct tutti_near_unity *, const float *, unsigned, float *, unsigned, unsigned *, unsigned *);
};

/* The zeroth-order modified Bessel function of the first kind, by its series (converges for any x). */
static double bessel_i0(double x) {
    double sum = 1, term = 1, quarter = x * x / 4;
    for (int k = 1; k < 200 && term > sum * 1e-17; k++) {
        term *= quarter / ((double)k * k);
        sum += term;
    }
    return sum;
}

/* The filter's impulse response at `t` frames from its centre: sinc cut off at `cutoff` of Nyquist, under a
   Kaiser window reaching zero weight beyond ± `half` frames. */
static double tap(double t, unsigned half, double cutoff, double beta) {
    double u = t / half;
    if (u <= -1 || u >= 1) return 0;
    double window = bessel_i0(beta * sqrt(1 - u * u)) / bessel_i0(beta);
    double x = M_PI * cutoff * t;
    double sinc = fabs(x) < 1e-12 ? 1 : sin(x) / x;
    return cutoff * sinc * window;
}

/* Called when the next output frame's window (frames whole - half + 1 ... whole + half) is not all in the history:
   takes every input frame the remaining `remaining` output frames surely need (the step glides monotonically to its
   target, so no later step is below the smaller of the two), but never one more, moving the window's frames to the
   front first when the history is full. Returns 0 when the input has run out. Shared by both kernels. */
static inline int take_input(struct tutti_near_unity *c, const float *input, unsigned input_frames, unsigned *taken,
                             unsigned remaining, unsigned channels, unsigned half) {
    if (*taken == input_frames) return 0;
    const unsigned capacity = c->capacity;
    unsigned whole = (unsigned)c->position;
    double least = (c->step < c->target ? c->step : c->target) * (1 - 1e-9);
    unsigned last = (unsigned)(c->position + least * (remaining - 1)) + half;
    unsigned count = last + 1 - c->filled;
    if (count > input_frames - *taken) count = input_frames - *taken;
    if (count > capacity - c->filled) {
        unsigned first = whole + 1 - half;
        for (unsigned ch = 0; ch < channels; ch++)
            memmove(c->history + ch * capacity, c->history + ch * capacity + first, (c->filled - first) * sizeof(float));
        c->filled -= first;
        c->position -= first;
        if (count > capacity - c->filled) count = capacity - c->filled;
    }
    for (unsigned ch = 0; ch < channels; ch++) {
        float *to = c->history + ch * capacity + c->filled;
        for (unsigned k = 0; k < count; k++) to[k] = input ? input[(*taken + k) * channels + ch] : 0.0f;
    }
    c->filled += count;
    *taken += count;
    return 1;
}

/* One output frame per iteration; the same code compiled for AVX2+FMA and for the baseline. */
#define NEAR_UNITY_KERNEL(NAME, ATTRIBUTES, CHANNELS, BLOCKS)                                                         \
    ATTRIBUTES static void NAME(struct tutti_near_unity *c, const float *input, unsigned input_frames, float *output,  \
                                unsigned output_frames, unsigned *used, unsigned *produced) {                          \
        const unsigned channels = CHANNELS ? CHANNELS : c->channels, taps = BLOCKS ? 8 * BLOCKS : c->taps;             \
        const unsigned half = taps / 2, capacity = c->capacity;                                                        \
        const unsigned blocks = taps / 8;                                                                              \
        unsigned taken = 0, made = 0;                                                                                  \
        while (made < output_frames) {                                                                                 \
            unsigned whole = (unsigned)c->position;                                                                    \
            if (whole + half >= c->filled) {                                                                           \
                if (!take_input(c, input, input_frames, &taken, output_frames - made, channels, half)) break;          \
                continue;                                                                                              \
            }                                                                                                          \
            double scaled = (c->position - whole) * c->phases;                                                         \
            unsigned row = (unsigned)scaled;                                                                           \
            if (row >= c->phases) row = c->phases - 1;                                                                 \
            float fraction = (float)(scaled - row);                                                                    \
            const float *base = c->table + (size_t)row * 2 * taps;                                                     \
            v8 coefficients[16];                                                                                       \
            const v8 weight = (v8){0, 0, 0, 0, 0, 0, 0, 0} + fraction;                                                 \
            for (unsigned b = 0; b < blocks; b++) {                                                                    \
                v8 value, difference;                                                                                  \
                memcpy(&value, base + 8 * b, sizeof value);                                                            \
                memcpy(&difference, base + taps + 8 * b, sizeof difference);                                           \
                coefficients[b] = value + weight * difference;                                                         \
            }                                                                                                          \
            for (unsigned ch = 0; ch < channels; ch++) {                                                               \
                const float *x = c->history + ch * capacity + whole + 1 - half;                                        \
                v8 sum = {0, 0, 0, 0, 0, 0, 0, 0};                                                                     \
                for (unsigned b = 0; b < blocks; b++) {                                                                \
                    v8 samples;                                                                                        \
                    memcpy(&samples, x + 8 * b, sizeof samples);                                                       \
                    sum += coefficients[b] * samples;                                                                  \
                }                                                                                                      \
                output[made * channels + ch] = ((sum[0] + sum[4]) + (sum[1] + sum[5])) +                               \
                                               ((sum[2] + sum[6]) + (sum[3] + sum[7]));                                \
            }                                                                                                          \
            made++;                                                                                                    \
            c->position += c->step;                                                                                    \
            c->step += (c->target - c->step) * c->glide;                                                               \
        }                                                                                                              \
        *used = taken;                                                                                                 \
        *produced = made;                                                                                              \
    }

/* Stereo at half-length 16 (the default), with its loops' bounds known; anything else with them read. */
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
NEAR_UNITY_KERNEL(kernel_avx2, __attribute__((target("avx2,fma"))), 0, 0)
#define HAVE_AVX2_KERNEL 1

/* The default shape by hand: both channels' dot products summed across their lanes together, so the frame
   ends in one store of its two samples. */
__attribute__((target("avx2,fma"))) static void kernel_avx2_stereo16(struct tutti_near_unity *c, const float *input,
                                                                     unsigned input_frames, float *output,
                                                                     unsigned output_frames, unsigned *used,
                                                                     unsigned *produced) {
    enum { half = 16, taps = 32 };
    /* Denormal input (the tail of a decoded fade) would cost the multiplies a microcode assist each: flushed to
       zero for the call, the caller's mode restored after. */
    const unsigned caller_csr = _mm_getcsr();
    _mm_setcsr(caller_csr | 0x8040);
    const unsigned capacity = c->capacity;
    float *left = c->history, *right = c->history + capacity;
    unsigned taken = 0, made = 0;
    while (made < output_frames) {
        unsigned whole = (unsigned)c->position;
        if (whole + half >= c->filled) {
            if (!take_input(c, input, input_frames, &taken, output_frames - made, 2, half)) break;
            continue;
        }
        double scaled = (c->position - whole) * c->phases;
        unsigned row = (unsigned)scaled;
        if (row >= c->phases) row = c->phases - 1;
        const __m256 weight = _mm256_set1_ps((float)(scaled - row));
        const float *base = c->table + (size_t)row * 2 * taps;
        const float *l = left + whole + 1 - half, *r = right + whole + 1 - half;
        __m256 c0 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(base + taps), _mm256_loadu_ps(base));
        __m256 c1 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(base + taps + 8), _mm256_loadu_ps(base + 8));
        __m256 c2 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(base + taps + 16), _mm256_loadu_ps(base + 16));
        __m256 c3 = _mm256_fmadd_ps(weight, _mm256_loadu_ps(base + taps + 24), _mm256_loadu_ps(base + 24));
        __m256 sl = _mm256_add_ps(_mm256_fmadd_ps(c0, _mm256_loadu_ps(l), _mm256_mul_ps(c1, _mm256_loadu_ps(l + 8))),
                                  _mm256_fmadd_ps(c2, _mm256_loadu_ps(l + 16), _mm256_mul_ps(c3, _mm256_loadu_ps(l + 24))));
        __m256 sr = _mm256_add_ps(_mm256_fmadd_ps(c0, _mm256_loadu_ps(r), _mm256_mul_ps(c1, _mm256_loadu_ps(r + 8))),
                                  _mm256_fmadd_ps(c2, _mm256_loadu_ps(r + 16), _mm256_mul_ps(c3, _mm256_loadu_ps(r + 24))));
        __m128 ql = _mm_add_ps(_mm256_castps256_ps128(sl), _mm256_extractf128_ps(sl, 1));
        __m128 qr = _mm_add_ps(_mm256_castps256_ps128(sr), _mm256_extractf128_ps(sr, 1));
        __m128 pairs = _mm_hadd_ps(ql, qr);       /* l0+l1, l2+l3, r0+r1, r2+r3 */
        __m128 both = _mm_hadd_ps(pairs, pairs);  /* l, r, l, r */
        _mm_storel_pi((__m64 *)(output + 2 * made), both);
        made++;
        c->position += c->step;
        c->step += (c->target - c->step) * c->glide;
    }
    _mm_setcsr(caller_csr);
    *used = taken;
    *produced = made;
}
#endif
NEAR_UNITY_KERNEL(kernel_baseline_stereo16, , 2, 4)
NEAR_UNITY_KERNEL(kernel_baseline, , 0, 0)

tutti_near_unity *tutti_near_unity_create(unsigned channels, unsigned half_length, unsigned phases, double cutoff,
                                          double kaiser_beta) {
    if (channels < 1 || channels > 32 || half_length < 8 || half_length > 64 || half_length % 4 != 0 || phases < 16 ||
        phases > 4096 || !(cutoff > 0 && cutoff <= 1) || !(kaiser_beta >= 0 && kaiser_beta <= 50))
        return NULL;
    tutti_near_unity *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->channels = channels;
    c->half = half_length;
    c->taps = 2 * half_length;
    c->phases = phases;
    /* Room for the window and a generous call's input before the history moves back to the front. */
    c->capacity = c->taps + 4096;
    c->table = malloc((size_t)phases * 2 * c->taps * sizeof(float));
    c->history = calloc((size_t)channels * c->capacity, sizeof(float));
    double *rows = malloc((size_t)(phases + 1) * c->taps * sizeof(double));
    if (!c->table || !c->history || !rows) {
        free(rows);
        tutti_near_unity_destroy(c);
        return NULL;
    }
    /* Row k, tap j: the response at j - (half - 1) - k / phases frames from the output's position. */
    for (unsigned k = 0; k <= phases; k++) {
        double *row = rows + (size_t)k * c->taps, sum = 0;
        for (unsigned j = 0; j < c->taps; j++) {
            row[j] = tap((double)j - (half_length - 1) - (double)k / phases, half_length, cutoff, kaiser_beta);
            sum += row[j];
        }
        for (unsigned j = 0; j < c->taps; j++) row[j] /= sum;
    }
    for (unsigned k = 0; k < phases; k++) {
        const double *row = rows + (size_t)k * c->taps, *next = row + c->taps;
        float *out = c->table + (size_t)k * 2 * c->taps;
        for (unsigned j = 0; j < c->taps; j++) {
            out[j] = (float)row[j];
            out[c->taps + j] = (float)(next[j] - row[j]);
        }
    }
    free(rows);
    /* half - 1 frames of silence before the first input frame: the first output is at the first input frame. */
    c->filled = half_length - 1;
    c->position = half_length - 1;
    c->step = c->target = 1;
    c->glide = 1;
    int stereo16 = channels == 2 && half_length == 16;
    c->kernel = stereo16 ? kernel_baseline_stereo16 : kernel_baseline;
#ifdef HAVE_AVX2_KERNEL
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) c->kernel = stereo16 ? kernel_avx2_stereo16 : kernel_avx2;
#endif
    return c;
}

void tutti_near_unity_destroy(tutti_near_unity *c) {
    if (!c) return;
    free(c->table);
    free(c->history);
    free(c);
}

void tutti_near_unity_set_ratio(tutti_near_unity *c, double input_per_output, double time_constant_frames) {
    /* Within [0.5, 2]: the window arithmetic holds there by a wide margin (drift needs ±0.001); NaN is 1. */
    if (!(input_per_output == input_per_output)) input_per_output = 1;
    if (input_per_output < 0.5) input_per_output = 0.5;
    if (input_per_output > 2) input_per_output = 2;
    c->target = input_per_output;
    if (time_constant_frames < 1) {
        c->step = input_per_output;
        c->glide = 1;
    } else {
        c->glide = 1 - exp(-1 / time_constant_frames);
    }
}

void tutti_near_unity_process(tutti_near_unity *c, const float *input, unsigned input_frames, float *output,
                              unsigned output_frames, unsigned *used, unsigned *produced) {
    c->kernel(c, input, input_frames, output, output_frames, used, produced);
}
