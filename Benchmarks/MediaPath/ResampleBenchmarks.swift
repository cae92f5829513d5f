import Benchmark

/// Resampler cost per packet (added with the resampler).
func registerResampleBenchmarks(_ configuration: Benchmark.Configuration) {}
