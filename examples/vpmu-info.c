/*
 * vpmu-info -- what this host offers a virtual PMU: the CPU's PMU as CPUID
 * describes it, KVM, perf_event, and which counter sources can work here
 * and why the others cannot.  See vpmu-info(1).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu/vpmu.h>

static void
usage(FILE *f)
{
	fprintf(f, "usage: vpmu-info [--json] [--help]\n"
	    "  -j, --json   print one JSON object instead of text\n"
	    "  -h, --help   print this help\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	vpmu_host *host;
	int ch, err, json = 0;

	while ((ch = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return (EXIT_SUCCESS);
		default:
			usage(stderr);
			return (2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vpmu-info: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(stderr);
		return (2);
	}

	if ((err = vpmu_host_open(&host)) != 0) {
		fprintf(stderr, "vpmu-info: vpmu_host_open: %s\n",
		    strerror(err));
		return (EXIT_FAILURE);
	}
	err = json ? vpmu_host_write_json(host, stdout) :
	    vpmu_host_write_text(host, stdout);
	vpmu_host_close(host);
	if (err != 0) {
		fprintf(stderr, "vpmu-info: writing the report: %s\n",
		    strerror(err));
		return (EXIT_FAILURE);
	}
	return (EXIT_SUCCESS);
}
