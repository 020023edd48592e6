package schema

import (
	"errors"
	"regexp"
)

var errInvalidEmail = errors.New("not a valid e-mail address")

var (
	errInvalidMAC     = errors.New("not a MAC address in lower-case colon form (aa:bb:cc:dd:ee:ff)")
	errInvalidPrefix  = errors.New("not a CIDR prefix (e.g. 10.1.0.0/24)")
	errPrefixHostBits = errors.New("prefix has host bits set; use the network address (e.g. 10.1.0.0/24)")
	errInvalidAddr    = errors.New("not an IP address")
)

// semverish accepts Kubernetes versions like 1.31 or v1.31.2.
var semverish = regexp.MustCompile(`^v?\d+\.\d+(\.\d+)?$`)

var errInvalidURL = errors.New("not an absolute http(s) URL")
