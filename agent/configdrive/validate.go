package configdrive

import (
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// ValidateUserData checks a request's user-data the way [Render] does (at most
// [MaxUserData] bytes, a "#cloud-config" first line, one YAML mapping within
// [MaxUserDataDepth], [MaxUserDataNodes] and [MaxUserDataAliases]), and merges a
// placeholder SSH key and user into it, so an API can refuse bad input at once (a users:
// that is not a list, keys under an anchor others alias) instead of when the drive is
// built. A failure is VALIDATION on userData.
func ValidateUserData(userData string) error {
	if userData == "" {
		return nil
	}
	if err := validate(Spec{InstanceID: "check", Hostname: "check", UserData: userData}); err != nil {
		return err
	}
	const placeholder = "virtflow-check"
	if _, err := renderUserData(Spec{UserData: userData, SSHKeys: []string{placeholder},
		Users: []User{{Name: placeholder, Groups: []string{placeholder}, SSHKeys: []string{placeholder}, Sudo: true}}}); err != nil {
		return err
	}
	return nil
}

// SSHKeyFingerprint checks that key is one authorized_keys line holding an SSH public key
// and returns its SHA256 fingerprint ("SHA256:…", as ssh-keygen -l prints it) and the key in
// its canonical form (type, base64 and comment, without options).
func SSHKeyFingerprint(key string) (fingerprint, canonical string, err error) {
	key = strings.TrimSpace(key)
	if err := validSSHKey(key); err != nil {
		return "", "", err
	}
	pk, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(key))
	if err != nil {
		return "", "", fmt.Errorf("not an SSH public key: %v", err)
	}
	canonical = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
	if comment != "" {
		canonical += " " + comment
	}
	return ssh.FingerprintSHA256(pk), canonical, nil
}
