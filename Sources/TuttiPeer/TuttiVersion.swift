import TuttiWire

/// Tutti's release version, as `tutti --version` prints it. Any thread.
public enum TuttiVersion {
    /// Semantic version of the package.
    public static let current = "0.1.0"

    /// `0.1.0 (control protocol 1)`: the version and the control protocol this build speaks.
    public static var description: String { "\(current) (control protocol \(ControlProtocol.version))" }
}
