/* bcryptprimitives.dll for Wine 8, tests only: Rust's standard library (1.78 and later) takes its
 * random numbers from ProcessPrng, which every Windows 10 and 11 has and Wine 8 lacks. This one
 * answers it from RtlGenRandom (advapi32's SystemFunction036), which Wine has. Built by
 * scripts/windows/wine-env.sh with mingw-w64 and put in the Wine prefix's system32; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
