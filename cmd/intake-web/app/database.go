package app

import (
	"fmt"
	"os"
)

// replicaName names this process among the replicas: its host and pid,
// unless REPLICA_NAME says otherwise.
func replicaName(cfg Config) string {
	if cfg.ReplicaName != "" {
		return cfg.ReplicaName
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
