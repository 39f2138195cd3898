/*
 * Stand-in for Windows' bcryptprimitives.dll, for running Go programs under
 * Wine 8 in tests only (scripts/wine/setup.sh builds and installs it into the
 * test prefix; it is never shipped).
 *
 * Go 1.24+ programs load bcryptprimitives.dll at start and take ProcessPrng
 * from it (runtime.loadOptionalSyscalls, crypto/internal/sysrand); Wine 8 has
 * no such DLL, so every Go program dies with "bcryptprimitives.dll not found".
 * Windows documents ProcessPrng as always succeeding and returning TRUE; this
 * one fills the buffer from RtlGenRandom (advapi32's SystemFunction036), which
 * Wine implements on the host's random source, in chunks a ULONG can carry.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
        if (!SystemFunction036(data, n)) {
            /* ProcessPrng must not fail: a caller that cannot get random
             * bytes has nothing safe to go on with. */
            ExitProcess(2);
        }
        data += n;
        size -= n;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    (void)inst; (void)reason; (void)reserved;
    return TRUE;
}
