// A stand-in for Windows' bcryptprimitives.dll, for running the Windows
// test binaries under Wine 8 (Debian bookworm), whose own copy lacks
// ProcessPrng, which the Go 1.24+ runtime calls at start. It fills the
// buffer from RtlGenRandom (advapi32's SystemFunction036). Test use only:
// never shipped.
#include <windows.h>

typedef BOOLEAN(WINAPI *gen_random_fn)(PVOID, ULONG);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	static gen_random_fn gen;
	if (gen == NULL) {
		HMODULE advapi = LoadLibraryA("advapi32.dll");
		if (advapi == NULL)
			return FALSE;
		gen = (gen_random_fn)GetProcAddress(advapi, "SystemFunction036");
		if (gen == NULL)
			return FALSE;
	}
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!gen(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
