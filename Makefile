# The two commands of the README, and the lab benchmark. Each does its own set-up.
.PHONY: demo test bench

demo:
	scripts/demo

test:
	scripts/test

# The lab benchmark, Tutti side by side with JackTrip (root; about 15 min): a release build, then the
# whole suite; the report goes to Benchmarks/results/<date>-<commit>/. BENCH_ARGS=--quick for the short one.
bench:
	scripts/setup
	swift build -c release --product tutti
	scripts/bench/run --tutti .build/release/tutti $(BENCH_ARGS)
