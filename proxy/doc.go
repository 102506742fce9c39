// Package proxy is Atrium's PostgreSQL wire-protocol proxy: clients connect
// to it as to the server it fronts, authenticate to that server with their
// own credentials, and everything they send is relayed unchanged, except the
// statements a Handler takes over.
//
// # Sessions
//
// Each client gets its own upstream connection (session mode). Start-up is
// handled here: SSLRequest (TLS when Config.TLSCert is set, refusing bytes
// sent before the handshake), GSSENCRequest (declined), CancelRequest (a
// session's BackendKeyData is the upstream backend's real process id with a
// secret the proxy mints; a CancelRequest naming both goes to the upstream's
// key or to a running Statement, and is dropped when the upstream owes the
// session nothing, now or by the time the request could be sent, so that a
// late cancel cannot hit the client's next statement), and protocol 3.x
// StartupMessages, whose
// parameters are forwarded; the upstream negotiates minor versions (3.2's
// long cancel keys pass through) and answers other major versions itself.
// Before its StartupMessage a connection is bounded separately
// (Config.MaxStartupConnections, StartupPacketTimeout), so sockets that send
// nothing cannot use up Config.MaxConnections. Authentication messages are relayed;
// SCRAM-SHA-256-PLUS is never offered, because channel binding cannot cross
// a proxy that terminates TLS.
//
// After authentication two goroutines relay whole messages, one per
// direction, decoding only what the proxy must see: Query and Parse from the
// client (for the Handler), ReadyForQuery, ErrorResponse and ParameterStatus
// from the upstream. The session records, in order, which client messages
// the upstream still owes a response; that FIFO tells it when the upstream is
// quiescent (so a Statement may use it) and routes the responses of the
// proxy's own statements to the Statement instead of the client.
//
// # Interception
//
// See Handler, Statement and Upstream. In the simple protocol the proxy
// answers with RowDescription, DataRows, CommandComplete (or ErrorResponse)
// and ReadyForQuery carrying the upstream's real transaction status. In the
// extended protocol an intercepted Parse becomes a virtual prepared statement
// that Bind, Describe, Execute and Close address by name; virtual and real
// statements may be mixed in one pipeline and responses keep their order.
// Limits: a Statement cannot use the upstream behind an unsynced Bind or
// Execute of another statement in the same pipeline (SQLSTATE 0A000); named
// virtual portals do not survive Sync; rows held for a portal fetched with a
// row limit are bounded by Config.MaxPortalBuffer (54000 past it).
//
// While a Statement runs, the session watches the client socket (see
// watch.go): a client that closes or resets its connection cancels the
// Statement's context at once, and the session ends once the Statement has
// put the upstream back; bytes a pipelining client sends meanwhile are held
// and read in order afterwards. Statement text reaches the Handler as UTF-8
// whatever the client_encoding, and what a Statement sends upstream is
// converted back to the client's encoding; a Query with a NUL inside, a
// malformed Parse and Describe or Close of an unknown subtype are relayed
// unintercepted, so the server answers them as it would without the proxy.
package proxy
