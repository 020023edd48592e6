package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/virtflow/virtflow/internal/platform/version"
)

// runVersion prints the build's version and revision (stamped at build time, see package
// version), as the server's --version and /version do.
func runVersion(_ context.Context, a *app, args []string) error {
	if len(args) != 0 {
		return usagef("version")
	}
	if a.output == "table" {
		_, err := fmt.Fprintf(a.io.Stdout, "virtflow %s\n", version.Get())
		return err
	}
	return a.show(version.Get(), nil)
}

// subcommands are the verbs completion offers after a command.
var subcommands = map[string][]string{
	"vm":              {"create", "start", "stop", "reboot", "delete"},
	"node":            {"cordon", "uncordon", "drain", "reenroll"},
	"clusters":        {"create", "list", "kubeconfig", "scale", "upgrade"},
	"flavor":          {"create", "set"},
	"watch":           {"vms", "nodes", "regionservices"},
	"inventory":       {"--list", "--host"},
	"lb":              {"list", "show", "listeners"},
	"global-services": {"list", "show", "attach", "detach"},
	"prices":          {"list", "add"},
	"completion":      {"bash", "zsh", "fish"},
}

// runCompletion writes a shell completion script: virtflow completion bash|zsh|fish.
// It completes commands, their verbs and the global options; for get, list and describe the
// type names come from the server (virtflow types) when one is configured.
//
//	source <(virtflow completion bash)          # bash, e.g. in ~/.bashrc
//	virtflow completion zsh > "${fpath[1]}/_virtflow"
//	virtflow completion fish > ~/.config/fish/completions/virtflow.fish
func runCompletion(_ context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usagef("completion bash|zsh|fish")
	}
	names := make([]string, 0, len(commands()))
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	var script string
	switch args[0] {
	case "bash":
		script = bashCompletion(names)
	case "zsh":
		script = "#compdef virtflow\nautoload -U +X bashcompinit && bashcompinit\n" + bashCompletion(names)
	case "fish":
		script = fishCompletion(names)
	default:
		return usagef("completion bash|zsh|fish")
	}
	_, err := fmt.Fprint(a.io.Stdout, script)
	return err
}

const globalFlags = "--endpoint --token -o --config --version"

func bashCompletion(names []string) string {
	var b strings.Builder
	b.WriteString("# virtflow completion for bash (and zsh through bashcompinit)\n_virtflow() {\n")
	b.WriteString("  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}\n")
	b.WriteString("  if [ \"$COMP_CWORD\" -eq 1 ]; then\n")
	fmt.Fprintf(&b, "    COMPREPLY=($(compgen -W %q -- \"$cur\")); return\n  fi\n", strings.Join(names, " ")+" "+globalFlags)
	b.WriteString("  case \"$cur\" in -*) COMPREPLY=($(compgen -W " + fmt.Sprintf("%q", globalFlags) + " -- \"$cur\")); return;; esac\n")
	b.WriteString("  case \"$cmd\" in\n")
	b.WriteString("    get|list|describe)\n      if [ \"$COMP_CWORD\" -eq 2 ]; then\n")
	b.WriteString("        COMPREPLY=($(compgen -W \"$(virtflow types -o json 2>/dev/null | sed -n 's/.*\"type\": *\"\\([^\"]*\\)\".*/\\1/p')\" -- \"$cur\"))\n      fi;;\n")
	verbs := make([]string, 0, len(subcommands))
	for c := range subcommands {
		verbs = append(verbs, c)
	}
	sort.Strings(verbs)
	for _, c := range verbs {
		fmt.Fprintf(&b, "    %s) [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W %q -- \"$cur\"));;\n", c, strings.Join(subcommands[c], " "))
	}
	b.WriteString("  esac\n}\ncomplete -o default -F _virtflow virtflow\n")
	return b.String()
}

func fishCompletion(names []string) string {
	var b strings.Builder
	b.WriteString("# virtflow completion for fish\ncomplete -c virtflow -f\n")
	for _, f := range []string{"endpoint", "token", "config"} {
		fmt.Fprintf(&b, "complete -c virtflow -l %s -r\n", f)
	}
	b.WriteString("complete -c virtflow -s o -x -a 'table json yaml'\ncomplete -c virtflow -l version\n")
	fmt.Fprintf(&b, "complete -c virtflow -n __fish_use_subcommand -a %q\n", strings.Join(names, " "))
	verbs := make([]string, 0, len(subcommands))
	for c := range subcommands {
		verbs = append(verbs, c)
	}
	sort.Strings(verbs)
	for _, c := range verbs {
		fmt.Fprintf(&b, "complete -c virtflow -n '__fish_seen_subcommand_from %s' -a %q\n", c, strings.Join(subcommands[c], " "))
	}
	b.WriteString("complete -c virtflow -n '__fish_seen_subcommand_from get list describe' -a '(virtflow types -o json 2>/dev/null | string match -r -g \"\\\"type\\\": *\\\"([^\\\"]*)\\\"\")'\n")
	return b.String()
}
