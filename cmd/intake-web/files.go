package main

import (
	"log/slog"
	"syscall"
)

// raiseFileLimit lifts the soft open-file limit to the hard limit, so the
// connection cap (web.Limits.MaxConnections, lowered to fit this limit) is
// as high as the machine allows. Go's runtime does the same on Linux since
// 1.19; doing it here makes it explicit, portable to other Unixes, and logged.
func raiseFileLimit(log *slog.Logger) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		log.Warn("cannot read the open-file limit", "err", err)
		return
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			log.Warn("cannot raise the open-file limit", "soft", rl.Cur, "hard", rl.Max, "err", err)
			return
		}
		rl = want
	}
	log.Info("open-file limit", "soft", rl.Cur, "hard", rl.Max)
}
