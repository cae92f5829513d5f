#ifndef TUTTI_COPUS_SHIM_H
#define TUTTI_COPUS_SHIM_H
#include <opus.h>

/*
 * opus_encoder_ctl and opus_decoder_ctl are variadic C functions ("int request, ..."), which Swift cannot
 * call. These header-only wrappers give each request shape Tutti uses a fixed signature. They only forward:
 * no state, no allocation (libopus's ctl handlers do not allocate), so they are realtime-safe wherever the
 * ctl itself is.
 *
 * Requests taking one opus_int32 (OPUS_SET_BITRATE_REQUEST, OPUS_SET_COMPLEXITY_REQUEST, ...): set_int.
 * Requests writing one opus_int32 (OPUS_GET_LOOKAHEAD_REQUEST, OPUS_GET_BITRATE_REQUEST, ...): get_int.
 * OPUS_RESET_STATE takes no argument: reset.
 * Each returns OPUS_OK or a negative libopus error code (OPUS_UNIMPLEMENTED for an unknown request).
 */

static inline int tutti_opus_encoder_set_int(OpusEncoder *encoder, int request, opus_int32 value) {
    return opus_encoder_ctl(encoder, request, value);
}

static inline int tutti_opus_encoder_get_int(OpusEncoder *encoder, int request, opus_int32 *value) {
    return opus_encoder_ctl(encoder, request, value);
}

static inline int tutti_opus_encoder_reset(OpusEncoder *encoder) {
    return opus_encoder_ctl(encoder, OPUS_RESET_STATE);
}

static inline int tutti_opus_decoder_set_int(OpusDecoder *decoder, int request, opus_int32 value) {
    return opus_decoder_ctl(decoder, request, value);
}

static inline int tutti_opus_decoder_get_int(OpusDecoder *decoder, int request, opus_int32 *value) {
    return opus_decoder_ctl(decoder, request, value);
}

static inline int tutti_opus_decoder_reset(OpusDecoder *decoder) {
    return opus_decoder_ctl(decoder, OPUS_RESET_STATE);
}

#endif
