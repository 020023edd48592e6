package configdrive

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/virtflow/virtflow/domain/apierr"
)

// TestHostileUserDataRefused: alias bombs and deeply nested documents are refused with
// VALIDATION on userData by the API's check and by Render (the worker's and the agent's
// path), with an SSH key to merge, allocating little on the way.
func TestHostileUserDataRefused(t *testing.T) {
	key := testKey(t, 1, "tenant@virtflow")
	for _, tc := range []struct{ name, userData, want string }{
		{"alias bomb 9^6", aliasBomb(6), "YAML nodes"},
		{"alias bomb 9^9", aliasBomb(9), "YAML nodes"},
		{"deep flow 64 KiB", deepFlow(), "nests more than"},
		{"deep block 64 KiB", deepBlock(), "nests more than"},
		{"flow 65 deep", "#cloud-config\nx: " + strings.Repeat("[", 65) + strings.Repeat("]", 65) + "\n", "nests more than"},
		{"alias nested deep", "#cloud-config\na: &a " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\nb: " + strings.Repeat("[", 30) + "*a" + strings.Repeat("]", 30) + "\n", "nests more than"},
		{"many aliases", "#cloud-config\na: &a x\nb: [" + strings.Repeat("*a, ", MaxUserDataAliases) + "*a]\n", "aliases"},
		{"many nodes", "#cloud-config\nx: [" + strings.Repeat("1,", MaxUserDataNodes) + "1]\n", "YAML nodes"},
		{"two documents", "#cloud-config\na: 1\n---\nb: 2\n", "one YAML document"},
		{"shared keys", "#cloud-config\nssh_authorized_keys: &k [a]\nusers: [{name: bob, ssh_authorized_keys: *k}]\n", "anchor &k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, check := range []struct {
				name string
				run  func() error
			}{
				{"ValidateUserData", func() error { return ValidateUserData(tc.userData) }},
				{"Render", func() error {
					_, err := Render(Spec{InstanceID: "vm-1", Hostname: "vm-1", UserData: tc.userData, SSHKeys: []string{key}})
					return err
				}},
			} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err := check.run()
				runtime.ReadMemStats(&after)
				var e *apierr.Error
				if !errors.As(err, &e) || e.Code != apierr.CodeValidation || e.Field != "userData" {
					t.Fatalf("%s: error = %v, want VALIDATION on userData", check.name, err)
				}
				if !strings.Contains(e.Error(), tc.want) {
					t.Errorf("%s: error %q does not say %q", check.name, e.Error(), tc.want)
				}
				// The old code allocated 1.2 GB on the alias bomb and 1.7 GB on the deep
				// document; a refusal now costs a few MB at most.
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
					t.Errorf("%s: refusing allocated %d MB", check.name, alloc>>20)
				}
			}
		})
	}
}

// TestRenderKeepsAnchors: a legitimate cloud-config with anchors and aliases renders with
// the SSH keys and users merged in, its anchors and aliases written as they were (not
// expanded), and decodes to what the request meant plus the keys.
func TestRenderKeepsAnchors(t *testing.T) {
	k1, k2 := testKey(t, 1, "tenant@virtflow"), testKey(t, 2, "alice@laptop")
	in := Spec{InstanceID: "vm-1", Hostname: "vm-1",
		UserData: "#cloud-config\n# base settings\nbase: &base\n  shell: /bin/sh\n  lock_passwd: false\n" +
			"pkgs: &pkgs [nginx, curl]\npackages: *pkgs\n" +
			"users:\n  - default\n  - <<: *base\n    name: alice\n    groups: [ops]\n  - <<: *base\n    name: bob\n" +
			"ssh_authorized_keys: *keylist\n",
		SSHKeys: []string{k1},
		Users:   []User{{Name: "alice", SSHKeys: []string{k2}, Sudo: true}},
	}
	in.UserData = strings.Replace(in.UserData, "pkgs: &pkgs", "keys: &keylist ["+k2+"]\npkgs: &pkgs", 1)
	files, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	got := string(files[FileUserData])
	if !strings.HasPrefix(got, "#cloud-config\n") || strings.Count(got, "#cloud-config") != 1 {
		t.Errorf("user-data must start with one #cloud-config line:\n%s", got)
	}
	for _, want := range []string{"&base", "<<: *base", "&pkgs", "packages: *pkgs", "# base settings"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered user-data lacks %q:\n%s", want, got)
		}
	}
	doc := decode(t, files[FileUserData])
	if p, _ := doc["packages"].([]any); len(p) != 2 || p[0] != "nginx" {
		t.Errorf("packages = %v, want [nginx curl]", doc["packages"])
	}
	if keys, _ := doc["ssh_authorized_keys"].([]any); len(keys) != 2 || keys[0] != k2 || keys[1] != k1 {
		t.Errorf("ssh_authorized_keys = %v, want the aliased list and the VM's key", doc["ssh_authorized_keys"])
	}
	if list, _ := doc["keys"].([]any); len(list) != 1 {
		t.Errorf("the anchored list the keys were merged from changed: %v", doc["keys"])
	}
	users, _ := doc["users"].([]any)
	if len(users) != 3 {
		t.Fatalf("users = %v", doc["users"])
	}
	alice, _ := users[1].(map[string]any)
	bob, _ := users[2].(map[string]any)
	if alice["shell"] != "/bin/sh" || alice["sudo"] != sudoAll || len(alice["ssh_authorized_keys"].([]any)) != 1 {
		t.Errorf("alice = %v, want the merged base, sudo and her key", alice)
	}
	if bob["shell"] != "/bin/sh" || bob["sudo"] != nil || bob["ssh_authorized_keys"] != nil {
		t.Errorf("bob = %v, want the base only (alice's changes must not show through the alias)", bob)
	}
	if err := ValidateUserData(in.UserData); err != nil {
		t.Errorf("ValidateUserData: %v", err)
	}
}
