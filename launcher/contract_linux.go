package launcher

//go:generate go run ../internal/vocab/cheader contract_linux.h
