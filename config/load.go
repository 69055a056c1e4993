package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sagikazarmark/locafero"
	"github.com/spf13/afero"
	"github.com/spf13/viper"
)

// LoadOptions says where [Load] looks and what overrides the file. The zero
// value (or a nil pointer) means defaults.
type LoadOptions struct {
	// File is the --config flag; when set it must exist. A relative path is
	// taken relative to WorkDir when WorkDir is set.
	File string
	// LookupEnv reads the environment: MCPX_CONFIG, MCPX_EXPOSE,
	// MCPX_SEPARATOR, XDG_CONFIG_HOME, HOME and every ${VAR}.
	// nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// WorkDir is where ./mcpx.{json,yaml,yml,toml} is looked for;
	// "" means os.Getwd().
	WorkDir string
	// ConfigHome holds mcpx/config.{json,yaml,yml,toml}; "" means
	// $XDG_CONFIG_HOME, else ~/.config.
	ConfigHome string
	// Expose is the --expose flag; "" means not set.
	Expose string
	// Separator is the --separator flag; nil means not set ("" is a value).
	Separator *string
	// Profile is the --profile flag; "" means not set (MCPX_PROFILE may
	// then choose one).
	Profile string
}

// withDefaults returns a copy of o (nil allowed) with LookupEnv filled in.
func (o *LoadOptions) withDefaults() LoadOptions {
	var c LoadOptions
	if o != nil {
		c = *o
	}
	if c.LookupEnv == nil {
		c.LookupEnv = os.LookupEnv
	}
	return c
}

// SearchOrder is where [Load] looks for the config file, in order, as
// the help, the README and the no-config message say it.
const SearchOrder = "--config FILE, $MCPX_CONFIG, ./mcpx.{json,yaml,yml,toml}, $XDG_CONFIG_HOME/mcpx/config.{json,yaml,yml,toml} (~/.config/mcpx/ without XDG_CONFIG_HOME)"

// The names looked for, in order, in the working directory and in
// $XDG_CONFIG_HOME/mcpx.
var (
	workDirNames    = []string{"mcpx.json", "mcpx.yaml", "mcpx.yml", "mcpx.toml"}
	configHomeNames = []string{"config.json", "config.yaml", "config.yml", "config.toml"}
)

// Load finds the config file, then parses it as [Parse] does. The first of
// these wins: opts.File, $MCPX_CONFIG, ./mcpx.{json,yaml,yml,toml} in
// WorkDir, mcpx/config.{json,yaml,yml,toml} in ConfigHome. A file named by
// opts.File or MCPX_CONFIG that does not exist is an error; finding no file
// at all is not, and gives a Config with every default and File "".
func Load(opts *LoadOptions) (*Config, error) {
	o := opts.withDefaults()
	file, err := o.find()
	if err != nil {
		return nil, err
	}
	if file == "" {
		return Parse("", nil, &o)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Msg: fileProblem(err)}
	}
	return Parse(file, data, &o)
}

func (o *LoadOptions) find() (string, error) {
	if o.File != "" {
		return o.named(o.File, "")
	}
	if env, ok := o.LookupEnv("MCPX_CONFIG"); ok && env != "" {
		return o.named(env, " (named by MCPX_CONFIG)")
	}

	workDir := o.WorkDir
	if workDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("config: working directory: %w", err)
		}
		workDir = wd
	}
	// viper's Finder does the search. Load does not let viper read the
	// file: Parse decodes it itself (see decode.go).
	finders := []viper.Finder{
		locafero.Finder{Paths: []string{workDir}, Names: workDirNames, Type: locafero.FileTypeFile},
	}
	if home := o.configHome(); home != "" {
		finders = append(finders, locafero.Finder{
			Paths: []string{filepath.Join(home, "mcpx")}, Names: configHomeNames, Type: locafero.FileTypeFile,
		})
	}
	found, err := viper.Finders(finders...).Find(afero.NewOsFs())
	if len(found) > 0 {
		return found[0], nil
	}
	if err != nil {
		return "", &Error{Msg: "looking for a config file: " + err.Error()}
	}
	return "", nil
}

// named checks a file the user named: it must exist and be a file.
func (o *LoadOptions) named(file, why string) (string, error) {
	if o.WorkDir != "" && !filepath.IsAbs(file) {
		file = filepath.Join(o.WorkDir, file)
	}
	info, err := os.Stat(file)
	switch {
	case err != nil:
		return "", &Error{File: file, Msg: fileProblem(err) + why}
	case info.IsDir():
		return "", &Error{File: file, Msg: "is a directory" + why}
	}
	return file, nil
}

// configHome is ConfigHome, else $XDG_CONFIG_HOME (absolute paths only, as
// the XDG spec says), else ~/.config; "" when there is no home.
func (o *LoadOptions) configHome() string {
	if o.ConfigHome != "" {
		return o.ConfigHome
	}
	if xdg, ok := o.LookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(xdg) {
		return xdg
	}
	home, ok := o.LookupEnv("HOME")
	if !ok || home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return ""
		}
	}
	return filepath.Join(home, ".config")
}

// fileProblem says what is wrong with a file without repeating its path.
func fileProblem(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
