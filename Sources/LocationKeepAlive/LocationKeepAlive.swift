// The whole library under one name, as before the modules: import a module of its own to pay
// only for it (see "How it is built").
@_exported public import KeepAliveAudio
@_exported public import KeepAliveCore
@_exported public import KeepAliveDelivery
@_exported public import KeepAliveGeoClue
@_exported public import KeepAliveHost
@_exported public import KeepAliveHostProtocol
@_exported public import KeepAliveJournal
@_exported public import KeepAliveMonitoring
@_exported public import KeepAliveService
@_exported public import KeepAliveSimulation
@_exported public import KeepAliveSleep
@_exported public import KeepAliveReceiver
