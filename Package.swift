// swift-tools-version:6.1
// Tutti: several Linux machines as one audio bus.
//
// Layers point one way: the pure core (TuttiCore, TuttiWire, TuttiCodec, TuttiStream, TuttiSession,
// TuttiAnalysis) never imports an edge module; the edges (TuttiIO, TuttiDiscovery, TuttiJACK) touch the OS;
// TuttiPeer composes them into an embeddable peer; `tutti` is a thin CLI on top.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Tutti",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Tutti", targets: ["TuttiPeer", "TuttiEngine"]),
        // The data plane alone (wire formats, PCM, jitter buffer, packetizer, SRTP): for apps with their own I/O.
        .library(name: "TuttiMedia", targets: ["TuttiCore", "TuttiWire", "TuttiCodec", "TuttiResample", "TuttiStream", "TuttiSRTP"]),
        // The media engine alone (ports, connections, device clocks, sockets): for benchmarks and embedders.
        .library(name: "TuttiEngine", targets: ["TuttiEngine"]),
        // The processors a filter port runs (gain, delay, an EQ band, a limiter), for apps that process audio.
        .library(name: "TuttiProcess", targets: ["TuttiProcess"]),
        // LV2 plug-in hosting (lilv): the catalog of installed plug-ins and the processor that runs one.
        .library(name: "TuttiLV2", targets: ["TuttiLV2"]),
        // Session keys and the control channel's Noise handshake: for benchmarks and embedders.
        .library(name: "TuttiSecurity", targets: ["TuttiSecurity"]),
        .executable(name: "tutti", targets: ["tutti"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.5.2"..<"5.0.0"),
    ],
    targets: [
        // System libraries, found through pkg-config.
        .systemLibrary(
            name: "CAvahi", path: "Sources/CAvahi", pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(
            name: "COpus", path: "Sources/COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CLilv", path: "Sources/CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev"])]),
        .systemLibrary(
            name: "CSoxr", path: "Sources/CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(
            name: "CSamplerate", path: "Sources/CSamplerate", pkgConfig: "samplerate",
            providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(
            name: "CSpeexDSP", path: "Sources/CSpeexDSP", pkgConfig: "speexdsp",
            providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(
            name: "CJack", path: "Sources/CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CSRTP", path: "Sources/CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),

        // Pure, I/O-free core.
        .target(name: "TuttiCore", swiftSettings: strict),
        .target(name: "TuttiWire", dependencies: ["TuttiCore"], swiftSettings: strict),
        // The L16/L24 sample loops in C (SSE2's packed rounding on x86-64): pure, no I/O.
        .target(name: "CPCMKernels"),
        .target(name: "TuttiCodec", dependencies: ["TuttiCore", "COpus", "CPCMKernels"], swiftSettings: strict),
        // zita-resampler's VResampler (C++, no pkg-config file; Debian: libzita-resampler-dev) behind a C API.
        .target(name: "CZitaResampler", linkerSettings: [.linkedLibrary("zita-resampler")]),
        // Tutti's own near-unity polyphase resampler (C for its AVX2 kernel, chosen at run time).
        .target(name: "CNearUnity"),
        // Sample-rate conversion and drift compensation (libsoxr, libsamplerate, speexdsp, zita-resampler: pure
        // DSP, no I/O).
        .target(
            name: "TuttiResample", dependencies: ["CSoxr", "CSamplerate", "CSpeexDSP", "CZitaResampler", "CNearUnity"],
            swiftSettings: strict),
        .target(
            name: "TuttiStream", dependencies: ["TuttiCore", "TuttiWire", "TuttiCodec", "TuttiResample"],
            swiftSettings: strict),
        .target(name: "TuttiSession", dependencies: ["TuttiCore", "TuttiWire"], swiftSettings: strict),
        .target(name: "TuttiAnalysis", swiftSettings: strict),
        // Audio processors a filter port runs (gain, delay, an EQ band, a limiter): pure DSP, no I/O.
        .target(name: "TuttiProcess", swiftSettings: strict),
        // The LV2 plug-in host (lilv): the edge that loads plug-ins a filter port runs.
        .target(name: "TuttiLV2", dependencies: ["CLilv", "TuttiProcess"], swiftSettings: strict),
        // Ableton Link's protocol and timeline maths (the shared beat clock); its socket edge lives in TuttiIO.
        .target(name: "TuttiClock", dependencies: ["TuttiCore"], swiftSettings: strict),
        // The session's cryptography, pure: session keys, peer key pairs and the Noise handshake of the control
        // channel (swift-crypto's primitives; scrypt from CryptoExtras).
        .target(
            name: "TuttiSecurity",
            dependencies: [
                "TuttiCore", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // SRTP (RFC 3711, RFC 7714) through libsrtp2: the media of a members-only session, encrypted and
        // authenticated per packet with replay protection (pure computation, no I/O).
        // AEAD_AES_128_GCM SRTP over OpenSSL's EVP with a context per stream: no allocation per packet.
        .target(name: "CSRTPGCM", linkerSettings: [.linkedLibrary("crypto")]),
        .target(name: "TuttiSRTP", dependencies: ["CSRTP", "CSRTPGCM", "TuttiCore"], swiftSettings: strict),
        // Capture files (pcap, pcapng) to UDP datagrams, and what Link discovery traffic in them shows.
        .target(name: "TuttiLinkCapture", dependencies: ["TuttiClock"], swiftSettings: strict),

        // The edge: the only modules that touch sockets, Avahi, JACK, files, threads and the system clock.
        // CTuttiIO: thin C wrappers for the Linux calls Swift's Glibc module hides (recvmmsg, sendmmsg, epoll).
        .target(name: "CTuttiIO"),
        .target(name: "TuttiIO", dependencies: ["TuttiCore", "TuttiClock", "CTuttiIO"], swiftSettings: strict),
        .target(name: "TuttiDiscovery", dependencies: ["CAvahi"], swiftSettings: strict),
        // JACK: one client per peer whose process callback is the device clock of its jack ports.
        .target(name: "TuttiJACK", dependencies: ["TuttiCore", "TuttiIO", "CJack"], swiftSettings: strict),

        // The media engine: one per peer; its device clocks (paced or JACK) drive every port and connection.
        .target(
            name: "TuttiEngine",
            dependencies: [
                "TuttiCore", "TuttiWire", "TuttiCodec", "TuttiStream", "TuttiIO", "TuttiClock", "TuttiJACK", "TuttiProcess",
                "TuttiLV2", "TuttiSRTP",
            ],
            swiftSettings: strict),

        // The embeddable peer: control plane (SwiftNIO) around its media engine.
        .target(
            name: "TuttiPeer",
            dependencies: [
                "TuttiCore", "TuttiWire", "TuttiStream", "TuttiSession", "TuttiIO", "TuttiDiscovery", "TuttiJACK",
                "TuttiEngine", "TuttiProcess", "TuttiSecurity", "TuttiSRTP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "tutti",
            dependencies: [
                "TuttiCore", "TuttiWire", "TuttiClock", "TuttiPeer", "TuttiEngine", "TuttiAnalysis", "TuttiIO", "TuttiProcess",
                "TuttiLV2", "TuttiSecurity",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: strict),

        // Loopback harness for the batched UDP edge: system calls per packet, send costs (Benchmarks/UDPBatching.md).
        .executableTarget(name: "tutti-udp-bench", dependencies: ["TuttiIO", "TuttiCore"], swiftSettings: strict),
        // The Link lab tests' capture reader (scripts/link/tutti-link-test): which session survived.
        // The lab benchmark's analysis steps (scripts/bench/run): probe recordings, stats, JackTrip's counters, CPU.
        .executableTarget(name: "tutti-bench-analyze", dependencies: ["TuttiAnalysis", "TuttiIO", "TuttiCore"], swiftSettings: strict),
        .executableTarget(name: "tutti-link-pcap", dependencies: ["TuttiLinkCapture"], swiftSettings: strict),
        // The Link lab tests' analysis of their peers' sample logs (scripts/link/lib.sh): phase agreement, beat continuity.
        .executableTarget(name: "tutti-link-agreement", dependencies: ["TuttiAnalysis"], swiftSettings: strict),
        // The network parsers as libFuzzer targets (scripts/fuzz builds it with -sanitize=fuzzer -DFUZZING); an
        // ordinary build writes the seed corpora and replays inputs.
        .executableTarget(
            name: "tutti-fuzz",
            dependencies: [
                "TuttiWire", "TuttiClock", "TuttiCore", "TuttiIO", "TuttiStream", "TuttiSecurity",
                .product(name: "Crypto", package: "swift-crypto"),
            ], swiftSettings: strict),

        // Test support: manual clock, lossy in-memory network, the built `tutti` binary and child processes.
        .target(
            name: "TuttiTesting", dependencies: ["TuttiCore", "TuttiWire", "TuttiDiscovery"], path: "Tests/TuttiTesting",
            swiftSettings: strict),

        .testTarget(name: "TuttiCoreTests", dependencies: ["TuttiCore", "TuttiTesting"], swiftSettings: strict),
        .testTarget(name: "TuttiWireTests", dependencies: ["TuttiWire", "TuttiCore", "TuttiTesting"], swiftSettings: strict),
        .testTarget(
            name: "TuttiCodecTests", dependencies: ["TuttiCodec", "TuttiCore", "TuttiAnalysis", "TuttiTesting"], swiftSettings: strict),
        .testTarget(
            name: "TuttiStreamTests",
            dependencies: ["TuttiStream", "TuttiCore", "TuttiWire", "TuttiCodec", "TuttiResample", "TuttiTesting", "TuttiAnalysis"],
            swiftSettings: strict),
        .testTarget(name: "TuttiProcessTests", dependencies: ["TuttiProcess"], swiftSettings: strict),
        .testTarget(name: "TuttiLV2Tests", dependencies: ["TuttiLV2", "TuttiProcess"], swiftSettings: strict),
        .testTarget(name: "TuttiResampleTests", dependencies: ["TuttiResample", "TuttiAnalysis", "TuttiTesting"], swiftSettings: strict),
        .testTarget(
            name: "TuttiSecurityTests",
            dependencies: ["TuttiSecurity", "TuttiCore", "TuttiTesting", .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(name: "TuttiSRTPTests", dependencies: ["TuttiSRTP", "CSRTP"], swiftSettings: strict),
        .testTarget(name: "TuttiSessionTests", dependencies: ["TuttiSession", "TuttiCore", "TuttiWire"], swiftSettings: strict),
        .testTarget(
            name: "TuttiClockTests", dependencies: ["TuttiClock", "TuttiLinkCapture", "TuttiTesting"], exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(name: "TuttiLinkCaptureTests", dependencies: ["TuttiLinkCapture"], swiftSettings: strict),
        .testTarget(name: "TuttiAnalysisTests", dependencies: ["TuttiAnalysis", "TuttiTesting"], swiftSettings: strict),
        .testTarget(name: "TuttiIOTests", dependencies: ["TuttiIO", "TuttiCore"], swiftSettings: strict),
        .testTarget(name: "TuttiJACKTests", dependencies: ["TuttiJACK", "TuttiCore", "TuttiTesting"], swiftSettings: strict),
        .testTarget(name: "TuttiDiscoveryTests", dependencies: ["TuttiDiscovery"], swiftSettings: strict),
        .testTarget(
            name: "TuttiPeerTests",
            dependencies: [
                "TuttiPeer", "TuttiCore", "TuttiWire", "TuttiEngine", "TuttiIO", "TuttiAnalysis", "TuttiProcess", "TuttiStream",
                "TuttiTesting", "TuttiSecurity",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "TuttiEngineTests",
            dependencies: [
                "TuttiEngine", "TuttiCore", "TuttiIO", "TuttiStream", "TuttiWire", "TuttiCodec", "TuttiProcess", "TuttiTesting",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "TuttiCLITests",
            dependencies: [
                "tutti", "TuttiCore", "TuttiWire", "TuttiTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Help"], swiftSettings: strict),
    ]
)
