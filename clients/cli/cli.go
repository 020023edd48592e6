package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/virtflow/virtflow/clients/apiclient"
	"github.com/virtflow/virtflow/internal/platform/version"
)

// IO is the tool's surroundings, injected so that tests run it in-process.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// OS is the process's own IO.
func OS() IO { return IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv} }

// app is one run of the tool: global options and the client built from them.
type app struct {
	io       IO
	endpoint string
	token    string
	output   string
	cfgPath  string
	client   *apiclient.Client
}

// command is a subcommand: its usage line and what it does with its arguments.
type command struct {
	usage string
	run   func(ctx context.Context, a *app, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"login":           {"login --endpoint URL (--token TOKEN | --username NAME, password on stdin)", runLogin},
		"get":             {"get TYPE [ID]   (without ID: list)", runGet},
		"list":            {"list TYPE [--first N] [--where JSON]", runList},
		"describe":        {"describe TYPE ID   (fields and edges)", runDescribe},
		"create":          {"create TYPE --set FIELD=VALUE ...   (any type the API creates; ids or names for id fields)", runCreate},
		"update":          {"update TYPE ID --set FIELD=VALUE ...   (clearX=true clears; addXIDs/removeXIDs change edges)", runUpdate},
		"delete":          {"delete TYPE ID", runDelete},
		"types":           {"types   (the types get, list and describe know)", runTypes},
		"vm":              {"vm create|start|stop|reboot|delete ...", runVM},
		"snapshot":        {"snapshot list|create|revert|delete ...   (snapshots of a VM's root disk)", runSnapshot},
		"backup":          {"backup list|create|delete|restore ...   (backups of a VM's root disk; restore makes a new VM)", runBackup},
		"image":           {"image create-from-vm VM --name NAME [--wait]   (an image made from a stopped VM's root disk)", runImage},
		"clone":           {"clone VM --name NEW_VM [--flavor FLAVOR] [--wait]   (a new VM from a backup of VM)", runClone},
		"node":            {"node cordon|uncordon|drain|reenroll NODE_ID ...", runNode},
		"clusters":        {"clusters create|list|kubeconfig|scale|upgrade ...   (Kubernetes clusters)", runClusters},
		"flavor":          {"flavor create|set ... [--exclusive NONE|HOST|NUMA_NODE] [--network-mbps N]", runFlavor},
		"watch":           {"watch vms|nodes|regionservices [--id ID] [--tenant ID] [--count N]", runWatch},
		"inventory":       {"inventory --list | --host NAME   (Ansible dynamic inventory)", runInventory},
		"console":         {"console VM_ID   (the VM's serial console; lines typed are sent, Ctrl-D ends)", runConsole},
		"graph":           {"graph --vm ID | --node ID [--range hour|day|week|month]   (usage from Prometheus)", runGraph},
		"usage":           {"usage --tenant ID [--from TIME] [--to TIME] [--group-by RESOURCE,FLAVOR,REGION,DAY]", runUsage},
		"invoices":        {"invoices --tenant ID [--first N]", runInvoices},
		"routes":          {"routes [--first N]   (which node announces which VM address)", runRoutes},
		"lb":              {"lb list | lb show LB_ID | lb listeners set LB_ID --listener PORT[/TCP|HTTP]:TARGET_PORT ... [--interval-ms N]", runLB},
		"global-services": {"global-services list | show GS_ID | attach|detach GS_ID REGION_SERVICE_ID...", runGlobalServices},
		"version":         {"version   (this build's version and revision; also --version)", runVersion},
		"completion":      {"completion bash|zsh|fish   (a shell completion script)", runCompletion},
		"prices":          {"prices list | prices add --kind KIND [--key KEY] --amount DECIMAL [--multiplier X] [--from TIME]", runPrices},
	}
}

// usageError is a mistake in the command line: the run ends with exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// Run runs the tool with args (without the program name) and returns its exit code: 0, 1
// for a failure, 2 for a usage error.
func Run(ctx context.Context, args []string, sys IO) int {
	a := &app{io: sys}
	fs := flag.NewFlagSet("virtflow", flag.ContinueOnError)
	fs.SetOutput(sys.Stderr)
	fs.StringVar(&a.endpoint, "endpoint", "", "API server (default: $VIRTFLOW_ENDPOINT, then the login's)")
	fs.StringVar(&a.token, "token", "", "API token (default: $VIRTFLOW_TOKEN, then the login's)")
	fs.StringVar(&a.output, "o", "table", "output: table, json or yaml")
	fs.StringVar(&a.cfgPath, "config", "", "configuration file (default: $XDG_CONFIG_HOME/virtflow/config.json)")
	showVersion := fs.Bool("version", false, "print the version and revision and exit")
	cmds := commands()
	fs.Usage = func() {
		fmt.Fprintln(sys.Stderr, "usage: virtflow [--endpoint URL] [--token TOKEN] [-o table|json|yaml] COMMAND ...")
		names := make([]string, 0, len(cmds))
		for n := range cmds {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(sys.Stderr, "  virtflow %s\n", cmds[n].usage)
		}
		fmt.Fprintln(sys.Stderr, "global options:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprintf(sys.Stdout, "virtflow %s\n", version.Get())
		return 0
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(sys.Stderr, "virtflow: unknown command %q\n", name)
		fs.Usage()
		return 2
	}
	// Global options may also follow the command: virtflow list hosts -o json.
	rest, err := a.globalsAfter(rest)
	if err != nil {
		fmt.Fprintf(sys.Stderr, "virtflow %s: %v\n", name, err)
		return 2
	}
	switch a.output {
	case "table", "json", "yaml":
	default:
		fmt.Fprintf(sys.Stderr, "virtflow: -o %q: want table, json or yaml\n", a.output)
		return 2
	}
	if err := cmd.run(ctx, a, rest); err != nil {
		fmt.Fprintf(sys.Stderr, "virtflow %s: %v\n", name, err)
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintf(sys.Stderr, "usage: virtflow %s\n", cmd.usage)
			return 2
		}
		return 1
	}
	return 0
}

// globalsAfter takes -o/--output, --endpoint, --token and --config out of a command's
// arguments.
func (a *app) globalsAfter(args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") {
			rest = append(rest, arg)
			continue
		}
		var dst *string
		switch name {
		case "o", "output":
			dst = &a.output
		case "endpoint":
			dst = &a.endpoint
		case "token":
			dst = &a.token
		case "config":
			dst = &a.cfgPath
		default:
			rest = append(rest, arg)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%s needs a value", arg)
			}
			i++
			val = args[i]
		}
		*dst = val
	}
	return rest, nil
}

// configFile is the configuration path in use.
func (a *app) configFile() (string, error) {
	if a.cfgPath != "" {
		return a.cfgPath, nil
	}
	return configPath(a.io.Getenv)
}

// api returns the client: endpoint and token from the flags, the environment, or the stored
// login, in that order.
func (a *app) api() (*apiclient.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	endpoint, token := a.endpoint, a.token
	if endpoint == "" {
		endpoint = a.io.Getenv("VIRTFLOW_ENDPOINT")
	}
	if token == "" {
		token = a.io.Getenv("VIRTFLOW_TOKEN")
	}
	if endpoint == "" || token == "" {
		path, err := a.configFile()
		if err != nil {
			return nil, err
		}
		cfg, err := loadConfig(path)
		if err != nil {
			return nil, err
		}
		if endpoint == "" {
			endpoint = cfg.Endpoint
		}
		if token == "" {
			token = cfg.Token
		}
	}
	if endpoint == "" {
		return nil, errors.New("no endpoint: run `virtflow login --endpoint URL ...`, or set VIRTFLOW_ENDPOINT")
	}
	c, err := apiclient.New(endpoint, token)
	if err != nil {
		return nil, err
	}
	c.UserAgent = "virtflow-cli"
	a.client = c
	return c, nil
}

// parse parses a subcommand's flags, allowing flags after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%v", err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
