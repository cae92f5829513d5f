import TuttiStream
import TuttiWire

extension ConnectionStatistics {
    /// Sets `peakDBFS` and `rmsDBFS` from a meter's latest reading (both nil without one). Control plane.
    public mutating func setLevel(_ reading: LevelReading?) {
        peakDBFS = reading?.peakDBFS
        rmsDBFS = reading?.rmsDBFS
    }
}
