#ifndef TUTTI_CNEARUNITY_H
#define TUTTI_CNEARUNITY_H

/// A resampler for clock-drift compensation: the same nominal rate on both sides, a ratio (input frames per
/// output frame) within a few thousand ppm of 1 that changes a little every period.
///
/// A polyphase Kaiser-windowed sinc of `2 × half_length` taps, cut off at the Nyquist frequency, tabulated at
/// `phases` fractional positions (each normalized to unity gain at DC) and interpolated linearly between
/// them. Because the ratio stays so near 1, the fractional position moves by a millionth of a frame or so
/// per frame: one period reads one or two rows of the table, and every output frame is the same small
/// fixed-size computation (coefficients interpolated, then one dot product per channel), in 8-wide vectors
/// (AVX2 with FMA where the CPU has them). Delay: about `half_length` frames.
///
/// Input is taken only as far as the output asked for needs it (the rest is left to the caller, as
/// zita-resampler's `VResampler` does). One context is one stream; it is not thread-safe.
/// `create`/`destroy` allocate and free (control plane); `process` and `set_ratio` allocate nothing.
typedef struct tutti_near_unity tutti_near_unity;

/// `channels` 1...32, `half_length` a multiple of 4 in 8...64, `phases` 16...4096, `cutoff` in (0, 1] of the
/// Nyquist frequency, `kaiser_beta` in 0...50. NULL for anything outside, or when memory is short.
tutti_near_unity *tutti_near_unity_create(unsigned channels, unsigned half_length, unsigned phases, double cutoff,
                                          double kaiser_beta);
void tutti_near_unity_destroy(tutti_near_unity *context);

/// Moves the ratio (input frames per output frame) to `input_per_output`, along a one-pole glide with a time
/// constant of `time_constant_frames` output frames (at once for less than 1). The ratio is held to 0.5...2 (NaN
/// reads as 1).
void tutti_near_unity_set_ratio(tutti_near_unity *context, double input_per_output, double time_constant_frames);

/// Writes up to `output_frames` interleaved frames to `output`, taking interleaved input from `input` (NULL
/// reads as silence) only as far as they need; `*used` and `*produced` say how many of each. Fewer frames are
/// produced only when the input runs out.
void tutti_near_unity_process(tutti_near_unity *context, const float *input, unsigned input_frames, float *output,
                              unsigned output_frames, unsigned *used, unsigned *produced);

#endif
