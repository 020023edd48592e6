// Package egress is the one policy for the connections VirtFlow opens to URLs its users
// give it: an image's source (imagestore), an event rule's hookURL and a maintainer
// group's webhookURL (alerting). A tenant who may name a URL must not make the server or
// a worker talk to what only they can reach — loopback services, the cloud's metadata
// endpoint (169.254.169.254), the private network behind them — and read or trigger it
// (server-side request forgery).
//
// The policy denies, by default, every address that is not a public unicast one:
// unspecified, loopback, private (RFC 1918, fc00::/7), shared/CGNAT (100.64.0.0/10),
// link-local (169.254.0.0/16, fe80::/10), multicast, documentation, benchmarking and
// reserved ranges, and the IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64,
// 6to4) are judged by that address. The operator allows more with a list of CIDRs and
// host names (VIRTFLOW_EGRESS_ALLOW="10.0.0.0/8,images.internal,*.corp.example").
//
// It is checked twice:
//
//   - When a URL is stored (Policy.Validate): only http and https, and a host written as
//     a literal address — in any spelling a resolver accepts: 2130706433, 0x7f.1,
//     0177.0.0.1, [::ffff:127.0.0.1] — is refused when the policy denies it, with a
//     VALIDATION error naming the field. A host name is not resolved then: what it
//     resolves to may change, so names are judged when they are dialled.
//   - When a connection is opened (Policy.Client): the dialer's Control function sees the
//     address actually connected to, after resolution, so a name that resolves (or is
//     rebound) to a denied address fails there ([ErrDenied]). Every redirect is a new
//     request through the same dialer, and the client follows at most MaxRedirects of
//     them; a redirect to another host drops the hook signature and other credentials.
//
// A host name on the allow list is dialled whatever it resolves to: the operator vouches
// for it. The client never uses an HTTP proxy from the environment: a proxy would be the
// address dialled, and the policy could not see the target.
package egress
