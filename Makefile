# The two commands of the README, the lab benchmark, and installation. Each does its own set-up.
.PHONY: demo test bench fuzz install

demo:
	scripts/demo

test:
	scripts/test

# The long fuzzing run: 10^7 inputs through each parser of network input and the SDP writer (scripts/fuzz, an
# optimized build), one target after another, each in one process per core sharing its corpus; the corpus grows in
# fuzz-out/corpus/ and a crashing input is saved in fuzz-out/crashes/.
fuzz:
	scripts/setup
	scripts/fuzz --runs 10000000 --jobs $$(nproc)

# The lab benchmark, Tutti side by side with JackTrip (root; about 15 min plus the floor sweep's 1-2 h): a
# release build, then the whole suite; the report goes to Benchmarks/results/<date>-<commit>/. BENCH_ARGS=--quick for the short one.
bench:
	scripts/setup
	swift build -c release --product tutti
	swift build -c release --product tutti-bench-analyze
	swift build -c release --product tutti-link-agreement
	scripts/bench/run --tutti .build/release/tutti $(BENCH_ARGS)

# Installs the release build, its man page (tutti.1, generated from the command's own help) and shell
# completions for bash, zsh and fish under $(DESTDIR)$(PREFIX).
PREFIX ?= /usr/local
install:
	scripts/install "$(DESTDIR)$(PREFIX)"
