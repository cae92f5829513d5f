// swift-tools-version:6.1
// Tutti media-path benchmarks (package-benchmark, ordo-one): time per packet and allocations per packet
// on the steady-state data plane. A separate package so the main package never depends on the
// benchmark harness. Run from this directory: see README.md.
import PackageDescription

let package = Package(
    name: "TuttiBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Tutti", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // package-benchmark finds benchmark targets by their directory's parent being named `Benchmarks`.
        .executableTarget(
            name: "MediaPath",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "TuttiMedia", package: "Tutti"),
                .product(name: "TuttiEngine", package: "Tutti"),
                .product(name: "TuttiProcess", package: "Tutti"),
                .product(name: "TuttiLV2", package: "Tutti"),
                .product(name: "TuttiSecurity", package: "Tutti"),
            ],
            path: "MediaPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        )
    ]
)
