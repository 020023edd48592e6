package configdrive

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/virtflow/virtflow/domain/apierr"
)

// The meta-data keys of the readiness call (underscores, so that cloud-init's templates and
// `cloud-init query` can name them too).
const (
	// MetaReadyURL is the URL the guest posts to when it is up.
	MetaReadyURL = "virtflow_ready_url"
	// MetaGuestCredential is the guest's credential for that call.
	MetaGuestCredential = "virtflow_guest_token"
)

// PerBootScript is where the vendor-data puts the script that repeats the readiness call on
// every boot (cloud-init runs /var/lib/cloud/scripts/per-boot/* in its final stage).
const PerBootScript = "/var/lib/cloud/scripts/per-boot/virtflow-ready"

// ReadyScript is the readiness call for any init system: it mounts the config drive, reads
// the URL and the credential from its meta-data and posts the host name and global
// addresses with curl or, failing that, busybox wget. The README shows it; the vendor-data
// installs it as PerBootScript.
const ReadyScript = `#!/bin/sh
# VirtFlow: tell the platform this guest is up (README: "Guest readiness").
d=$(mktemp -d) || exit 0
mount -o ro /dev/disk/by-label/cidata "$d" 2>/dev/null || mount -o ro /dev/disk/by-label/CIDATA "$d" 2>/dev/null || { rmdir "$d"; exit 0; }
url=$(sed -n 's/^` + MetaReadyURL + `: *//p' "$d/meta-data" | tr -d "\"'")
tok=$(sed -n 's/^` + MetaGuestCredential + `: *//p' "$d/meta-data" | tr -d "\"'")
umount "$d"; rmdir "$d"
[ -n "$url" ] && [ -n "$tok" ] || exit 0
addrs=$(ip -o addr show scope global 2>/dev/null | awk '{print $4}' | tr '\n' ',')
if command -v curl >/dev/null 2>&1; then
  curl -fsS -m 30 --retry 10 --retry-connrefused -H "Authorization: Bearer $tok" \
    --data-urlencode "hostname=$(hostname)" --data-urlencode "addresses=$addrs" "$url" >/dev/null
else
  wget -q -O /dev/null --header "Authorization: Bearer $tok" --post-data "hostname=$(hostname)&addresses=$addrs" "$url"
fi
`

// readiness reports whether in asks for the readiness call.
func readiness(in Spec) bool { return in.ReadyURL != "" && in.GuestCredential != "" }

var credentialRe = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// validReadiness checks ReadyURL (an absolute http or https URL without a query, user or
// fragment) and GuestCredential (URL-safe characters), which come together or not at all.
func validReadiness(in Spec) error {
	if in.ReadyURL == "" && in.GuestCredential == "" {
		return nil
	}
	u, err := url.Parse(in.ReadyURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(in.ReadyURL, " \t\r\n'\"") {
		return apierr.Validation("readyUrl", "must be an absolute http or https URL without query, user or fragment")
	}
	if !credentialRe.MatchString(in.GuestCredential) {
		return apierr.Validation("guestCredential", "must be 16 to 128 URL-safe characters")
	}
	return nil
}

// renderVendorData writes the vendor-data of a drive with the readiness call: cloud-init's
// phone_home module posting instance_id, hostname and fqdn to ReadyURL with the credential
// as the query parameter token (phone_home sends no headers; the server does not log
// queries), and ReadyScript as PerBootScript so that every later boot reports again
// (phone_home runs once per instance). Vendor-data is cloud-init's place for what the
// platform adds: the request's user-data can still override it.
func renderVendorData(in Spec) ([]byte, error) {
	doc := yaml.MapSlice{
		{Key: "phone_home", Value: yaml.MapSlice{
			{Key: "url", Value: in.ReadyURL + "?token=" + url.QueryEscape(in.GuestCredential)},
			{Key: "post", Value: []string{"instance_id", "hostname", "fqdn"}},
			{Key: "tries", Value: 10},
		}},
		{Key: "write_files", Value: []yaml.MapSlice{{
			{Key: "path", Value: PerBootScript},
			{Key: "permissions", Value: "0755"},
			{Key: "content", Value: ReadyScript},
		}}},
	}
	b, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(fmt.Sprintf("%s\n", cloudConfigHeader)), b...), nil
}
