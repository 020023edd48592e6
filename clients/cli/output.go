package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/goccy/go-yaml"
)

// show writes v in the chosen output: JSON and YAML as they are; a table of rows with the
// given columns (a row is a map from column to value). A single object is a table of one row.
func (a *app) show(v any, columns []string) error {
	switch a.output {
	case "json":
		enc := json.NewEncoder(a.io.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		plain, err := yamlValue(v)
		if err != nil {
			return err
		}
		b, err := yaml.MarshalWithOptions(plain, yaml.UseLiteralStyleIfMultiline(true))
		if err != nil {
			return err
		}
		_, err = a.io.Stdout.Write(b)
		return err
	}
	var rows []map[string]any
	switch x := v.(type) {
	case []map[string]any:
		rows = x
	case map[string]any:
		rows = []map[string]any{x}
	default:
		// Typed values: through JSON to maps.
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var one map[string]any
		if json.Unmarshal(b, &one) == nil {
			rows = []map[string]any{one}
		} else if err := json.Unmarshal(b, &rows); err != nil {
			return err
		}
	}
	if columns == nil {
		columns = defaultColumns(rows)
	}
	tw := tabwriter.NewWriter(a.io.Stdout, 0, 4, 2, ' ', 0)
	head := make([]string, len(columns))
	for i, c := range columns {
		head[i] = strings.ToUpper(snakeCase(c))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		cells := make([]string, len(columns))
		for i, c := range columns {
			cells[i] = cell(r[c])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// yamlValue is v through JSON with its numbers kept exact: whole numbers become int64 (a
// memoryMB of 2048 prints as 2048, not 2048.0, and ids do not lose digits), others float64.
// Going through JSON also gives YAML the same keys as -o json (the GraphQL names).
func yamlValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return exactNumbers(out), nil
}

func exactNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = exactNumbers(e)
		}
	}
	return v
}

// defaultColumns are id, name and status first, then the other scalar fields in name
// order, at most eight in all (-o json or yaml shows everything).
func defaultColumns(rows []map[string]any) []string {
	seen := map[string]bool{}
	for _, r := range rows {
		for k, v := range r {
			switch v.(type) {
			case map[string]any, []any:
				continue
			}
			seen[k] = true
		}
	}
	var cols []string
	for _, k := range []string{"id", "name", "status"} {
		if seen[k] {
			cols = append(cols, k)
			delete(seen, k)
		}
	}
	var rest []string
	for k := range seen {
		if k == "createdAt" || k == "updatedAt" {
			continue
		}
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		if len(cols) >= 8 {
			break
		}
		cols = append(cols, k)
	}
	return cols
}

// cell is a value as a table shows it.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		if x == "" {
			return "-"
		}
		if len(x) > 60 {
			return x[:57] + "..."
		}
		return x
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
		return fmt.Sprint(x)
	case map[string]any:
		if n, ok := x["name"]; ok {
			return cell(n)
		}
		if id, ok := x["id"]; ok {
			return cell(id)
		}
	}
	b, _ := json.Marshal(v)
	return cell(string(b))
}

// snakeCase turns a GraphQL name into a column heading word ("memoryMB" → "memory_mb").
func snakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 {
			prevLower := rs[i-1] >= 'a' && rs[i-1] <= 'z'
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			if prevLower || (rs[i-1] >= 'A' && rs[i-1] <= 'Z' && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}
