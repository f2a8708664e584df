/* SPDX-License-Identifier: Apache-2.0
 *
 * The broker benchmarks' subscriber: counts the messages on one subject until a number of
 * them arrived and prints when the last one did.
 *
 * It stands in for Meshery Server, which a benchmark cannot run, and must cost as little CPU
 * as it can: on a 2-core machine every cycle it spends is taken from meshsync or nats-server,
 * which share the cores with it. A Python subscriber spent 0.4-0.6 s of CPU per 100,000
 * pods; this one reads the protocol with memchr() and skips the payloads unread.
 *
 * Protocol: it prints "ready" once the server has answered the PING after SUB (so the
 * subscription is in place), then "<count> <CLOCK_MONOTONIC seconds of the last message>"
 * when @count messages arrived, the connection closed or @timeout seconds passed.
 */

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (4 << 20)

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
send_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	char hello[512];
	char *buf;
	size_t have = 0;
	size_t pos = 0;
	size_t skip = 0; /* payload bytes (and their CRLF) still to pass over */
	long count;
	long n = 0;
	double deadline;
	double last = 0;
	int ready = 0;
	int rcvbuf = 8 << 20;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: nats-count PORT SUBJECT COUNT TIMEOUT\n");
		return 2;
	}
	addr.sin_port = htons((uint16_t)atoi(argv[1]));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	count = atol(argv[3]);
	deadline = now() + atof(argv[4]);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) < 0 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		fprintf(stderr, "nats-count: cannot connect to 127.0.0.1:%s: %s\n", argv[1],
		        strerror(errno));
		return 1;
	}
	snprintf(hello, sizeof hello,
	         "CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB %s 1\r\nPING\r\n", argv[2]);
	if (send_all(fd, hello, strlen(hello)) < 0) {
		fprintf(stderr, "nats-count: cannot subscribe: %s\n", strerror(errno));
		return 1;
	}
	buf = malloc(BUF_SIZE);
	if (buf == NULL)
		return 1;

	while (n < count) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		double left = deadline - now();
		ssize_t got;

		if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			break;
		/* keep an unfinished control line at the front; payloads are never kept */
		if (pos > 0) {
			memmove(buf, buf + pos, have - pos);
			have -= pos;
			pos = 0;
		}
		got = recv(fd, buf + have, BUF_SIZE - have, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;

		while (n < count) {
			char *line;
			char *end;

			if (skip > 0) {
				size_t take = have - pos < skip ? have - pos : skip;
				pos += take;
				skip -= take;
				if (skip > 0)
					break;
				n++;
				last = now();
				continue;
			}
			line = buf + pos;
			end = memchr(line, '\n', have - pos);
			if (end == NULL) {
				if (have - pos == BUF_SIZE) {
					fprintf(stderr, "nats-count: control line over %d bytes\n",
					        BUF_SIZE);
					return 1;
				}
				break;
			}
			pos = (size_t)(end - buf) + 1;
			if (strncmp(line, "MSG ", 4) == 0) {
				char *size = end;
				while (size > line && (size[-1] == '\r' || size[-1] == '\n'))
					size--;
				while (size > line && size[-1] != ' ')
					size--;
				skip = strtoul(size, NULL, 10) + 2;
			} else if (strncmp(line, "PING", 4) == 0) {
				if (send_all(fd, "PONG\r\n", 6) < 0)
					break;
			} else if (strncmp(line, "PONG", 4) == 0 && !ready) {
				ready = 1;
				printf("ready\n");
				fflush(stdout);
			} else if (strncmp(line, "-ERR", 4) == 0) {
				fprintf(stderr, "nats-count: %.*s\n", (int)(end - line), line);
			}
		}
	}
	printf("%ld %.6f\n", n, last);
	free(buf);
	close(fd);
	return 0;
}
