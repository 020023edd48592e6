package kubecluster

import (
	"encoding/base64"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// kubeconfig is the subset of client-go's clientcmd v1 Config that an admin kubeconfig
// needs (client-go is not a dependency; kubectl reads this as it reads kubeadm's admin.conf).
type kubeconfig struct {
	APIVersion     string         `yaml:"apiVersion"`
	Kind           string         `yaml:"kind"`
	Clusters       []namedCluster `yaml:"clusters"`
	Users          []namedUser    `yaml:"users"`
	Contexts       []namedContext `yaml:"contexts"`
	CurrentContext string         `yaml:"current-context"`
	Preferences    struct{}       `yaml:"preferences"`
}

type namedCluster struct {
	Name    string `yaml:"name"`
	Cluster struct {
		Server                   string `yaml:"server"`
		CertificateAuthorityData string `yaml:"certificate-authority-data"`
	} `yaml:"cluster"`
}

type namedUser struct {
	Name string `yaml:"name"`
	User struct {
		ClientCertificateData string `yaml:"client-certificate-data"`
		ClientKeyData         string `yaml:"client-key-data"`
	} `yaml:"user"`
}

type namedContext struct {
	Name    string `yaml:"name"`
	Context struct {
		Cluster string `yaml:"cluster"`
		User    string `yaml:"user"`
	} `yaml:"context"`
}

// Kubeconfig renders the admin kubeconfig of cluster name, whose API is at endpoint
// (https://<VIP>:6443), with p's CA and admin certificate.
func Kubeconfig(name, endpoint string, p *PKI) (string, error) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	user := AdminUser + "@" + name
	var c kubeconfig
	c.APIVersion, c.Kind, c.CurrentContext = "v1", "Config", user
	var cl namedCluster
	cl.Name = name
	cl.Cluster.Server = endpoint
	cl.Cluster.CertificateAuthorityData = b64(p.CACert)
	var u namedUser
	u.Name = user
	u.User.ClientCertificateData = b64(p.AdminCert)
	u.User.ClientKeyData = b64(p.AdminKey)
	var cx namedContext
	cx.Name = user
	cx.Context.Cluster, cx.Context.User = name, user
	c.Clusters, c.Users, c.Contexts = []namedCluster{cl}, []namedUser{u}, []namedContext{cx}
	out, err := yaml.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("render kubeconfig: %w", err)
	}
	return string(out), nil
}
