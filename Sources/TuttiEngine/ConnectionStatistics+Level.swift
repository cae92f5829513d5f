import TuttiStream
import TuttiWire

public extension ConnectionStatistics {
    /// Sets `peakDBFS` and `rmsDBFS` from a meter's latest reading (both nil without one). Control plane.
    mutating func setLevel(_ reading: LevelReading?) {
        peakDBFS = reading?.peakDBFS
        rmsDBFS = reading?.rmsDBFS
    }
}
