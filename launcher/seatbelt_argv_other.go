//go:build !darwin

package launcher

// argvLauncher: only darwin has a launcher named by argv[1] (seatbelt-run).
func argvLauncher() bool { return false }
