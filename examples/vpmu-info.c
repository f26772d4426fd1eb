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
	fprintf(f, "usage: vpmu-info [--json]\n"
	    "       vpmu-info --help | --version\n"
	    "  -j, --json     print one JSON object instead of text\n"
	    "  -h, --help     print this help and exit\n"
	    "      --version  print the version of vpmu-info and libvpmu and exit\n");
}

/* A usage error: what is wrong (said already, or here), then where to read more. */
static int
usage_error(const char *what)
{
	if (what != NULL)
		fprintf(stderr, "vpmu-info: %s\n", what);
	fprintf(stderr, "Try 'vpmu-info --help' for more information.\n");
	return (2);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	vpmu_host *host;
	char msg[256];
	int ch, err, json = 0;

	while ((ch = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return (fflush(stdout) != 0 || ferror(stdout) ? EXIT_FAILURE :
			    EXIT_SUCCESS);
		case 'V':
			printf("vpmu-info (libvpmu %s)\n", vpmu_version());
			return (fflush(stdout) != 0 || ferror(stdout) ? EXIT_FAILURE :
			    EXIT_SUCCESS);
		default:
			return (usage_error(NULL));	/* getopt_long said why */
		}
	}
	if (optind != argc) {
		snprintf(msg, sizeof(msg), "unexpected argument \"%s\"", argv[optind]);
		return (usage_error(msg));
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
