package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Config is what login stores.
type Config struct {
	Endpoint string `json:"endpoint"`
	Token    string `json:"token"`
}

// configPath is $XDG_CONFIG_HOME/virtflow/config.json, or ~/.config/virtflow/config.json.
func configPath(getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("no XDG_CONFIG_HOME and no home directory: %w", err)
			}
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "virtflow", "config.json"), nil
}

// loadConfig reads the stored configuration; a missing file is an empty one.
func loadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// saveConfig writes c to path, readable by its owner only (it holds a token).
func saveConfig(path string, c Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
