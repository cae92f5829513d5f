// The C interface of CZitaResampler.h over zita-resampler's VResampler.
#include "CZitaResampler.h"

#include <new>
#include <zita-resampler/vresampler.h>

struct TuttiZitaResampler {
    VResampler resampler;
};

extern "C" TuttiZitaResampler *tutti_zita_create(double ratio, unsigned int channels, unsigned int halfLength) {
    TuttiZitaResampler *wrapper = new (std::nothrow) TuttiZitaResampler();
    if (wrapper == nullptr) return nullptr;
    if (wrapper->resampler.setup(ratio, channels, halfLength) != 0) {
        delete wrapper;
        return nullptr;
    }
    return wrapper;
}

extern "C" void tutti_zita_destroy(TuttiZitaResampler *resampler) { delete resampler; }

extern "C" int tutti_zita_input_size(const TuttiZitaResampler *resampler) { return resampler->resampler.inpsize(); }

extern "C" void tutti_zita_set_relative_ratio(
    TuttiZitaResampler *resampler, double relativeRatio, double smoothingFrames) {
    resampler->resampler.set_rrfilt(smoothingFrames);
    resampler->resampler.set_rratio(relativeRatio);
}

extern "C" int tutti_zita_process(
    TuttiZitaResampler *resampler, const float *input, unsigned int inputFrames, float *output,
    unsigned int outputFrames, unsigned int *usedFrames, unsigned int *producedFrames) {
    VResampler &engine = resampler->resampler;
    // VResampler reads a null input as silence; it never writes through inp_data.
    engine.inp_data = const_cast<float *>(input);
    engine.inp_count = inputFrames;
    engine.out_data = output;
    engine.out_count = outputFrames;
    int status = engine.process();
    *usedFrames = inputFrames - engine.inp_count;
    *producedFrames = outputFrames - engine.out_count;
    engine.inp_data = nullptr;
    engine.out_data = nullptr;
    return status;
}
