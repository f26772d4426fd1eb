/*
 * hello.c -- the console: one line per vCPU, then a line that exercises
 * every conversion of the runtime's printf-lite (test/guests/CMakeLists.txt
 * matches it character for character) and vg_snprintf's truncation.
 */
#include <vpmu-guest/runtime.h>

int
main(unsigned cpu)
{
	char buf[8];
	int n;

	vg_printf("hello from vCPU %u\n", cpu);
	if (cpu != 0)
		return (0);
	vg_printf("fmt: <%d> <%i> <%u> <%x> <%X> <%lx> <%s> <%c> <%5d> <%-5d> "
	    "<%05d> <%08x> <%#x> <%#010lx> <%%> <%lu> <%ld> <%zu>\n",
	    -42, 7, 42u, 0xbeefu, 0xbeefu, 0x123456789abul, "str", 'c', 42, 42,
	    -42, 0xabu, 0x1fu, 0xabcul, 18446744073709551615ul, -9000000000l,
	    (size_t)3);
	n = vg_snprintf(buf, sizeof(buf), "%s", "truncate me");
	vg_printf("snprintf: <%s> %d\n", buf, n);
	return (0);
}
