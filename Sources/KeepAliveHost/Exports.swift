// The host's wire comes with the host: code that imports KeepAliveHost for HostClient or
// HostNotice, as before they had a module of their own, compiles as it did. An app that needs
// only the wire imports KeepAliveHostProtocol, and links none of the host's runtime.
@_exported public import KeepAliveHostProtocol
