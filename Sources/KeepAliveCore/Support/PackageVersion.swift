/// This package's version, as `keepalive --version` prints it and the systemd units report it.
public enum PackageVersion {
    /// Semantic version of the release this source is.
    public static let current = "0.2.0"
}
