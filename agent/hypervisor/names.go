package hypervisor

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// DomainPrefix starts the name of every domain VirtFlow manages.
const DomainPrefix = "vf-"

// uuidNamespace is the name-based UUID namespace of VirtFlow domains (a fixed random UUID).
var uuidNamespace = uuid.MustParse("6f1c0f5e-3a4b-4d2e-9c7a-5b8e2d1f0a93")

// DomainName returns the name of the domain of VM vmID: "vf-<vm id>".
func DomainName(vmID int64) string { return DomainPrefix + strconv.FormatInt(vmID, 10) }

// ParseDomainName returns the VM id of a domain named by DomainName, and false for any other
// name.
func ParseDomainName(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, DomainPrefix)
	if !ok || rest == "" || rest[0] == '+' || rest[0] == '-' {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id <= 0 || DomainName(id) != name {
		return 0, false
	}
	return id, true
}

// DomainUUID returns the UUID a domain gets when its spec names none: a name-based (SHA-1)
// UUID of the domain name, the same on every host and every redefinition.
func DomainUUID(name string) string { return uuid.NewSHA1(uuidNamespace, []byte(name)).String() }
