module github.com/bo-agent/sandbox-local

go 1.26.8

require (
	github.com/landlock-lsm/go-landlock v0.11.2 // indirect
	github.com/moby/sys/reexec v0.1.0 // indirect
	github.com/seccomp/libseccomp-golang v0.11.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
