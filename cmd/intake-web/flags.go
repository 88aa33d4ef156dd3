package main

import (
	"errors"
	"flag"
)

// parseAnywhere parses args with fs, taking flags before or after the
// arguments that are not flags (the standard flag package stops at the
// first), and returns those arguments in order. status is the exit status
// when parsing ends the command (0 for -h, 2 for a bad flag, whose error fs
// has written); ok is false then.
func parseAnywhere(fs *flag.FlagSet, args []string) (rest []string, status int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0, false
			}
			return nil, 2, false
		}
		if fs.NArg() == 0 {
			return rest, 0, true
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
}
