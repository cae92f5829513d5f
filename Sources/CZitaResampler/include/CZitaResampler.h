// A C interface to zita-resampler's VResampler (libzita-resampler, a C++ library), for Swift.
//
// VResampler resamples interleaved float audio at a ratio (output rate / input rate) fixed at creation, times a
// relative ratio that may change at any time and is approached by a one-pole smoothing filter per output frame.
// It takes input only as it needs it: a process call stops when the output is full and leaves the rest of the
// input untaken. Realtime-safe after create: process and the setters allocate nothing, lock nothing, log nothing.
// Thread-safe: no (one owner).
#ifndef TUTTI_CZITARESAMPLER_H
#define TUTTI_CZITARESAMPLER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TuttiZitaResampler TuttiZitaResampler;

/// A VResampler at `ratio` (output rate / input rate) for `channels` interleaved channels with a filter of
/// `halfLength` taps a side (8...96). NULL if VResampler refuses them or memory runs out. Allocates.
TuttiZitaResampler *tutti_zita_create(double ratio, unsigned int channels, unsigned int halfLength);

/// Releases it (NULL is allowed).
void tutti_zita_destroy(TuttiZitaResampler *resampler);

/// Input frames the filter spans (`inpsize`: twice the half length, widened when downsampling).
int tutti_zita_input_size(const TuttiZitaResampler *resampler);

/// Sets the relative ratio (`set_rratio`, clamped by VResampler to [0.95, 16]) and the smoothing time constant in
/// output frames with which the step follows it (`set_rrfilt`; below 1: at once).
void tutti_zita_set_relative_ratio(TuttiZitaResampler *resampler, double relativeRatio, double smoothingFrames);

/// Produces up to `outputFrames` frames from up to `inputFrames` frames of `input`; writes the frames taken and
/// produced. Returns 0, or VResampler's non-zero status if it is not set up.
int tutti_zita_process(
    TuttiZitaResampler *resampler, const float *input, unsigned int inputFrames, float *output,
    unsigned int outputFrames, unsigned int *usedFrames, unsigned int *producedFrames);

#ifdef __cplusplus
}
#endif

#endif
