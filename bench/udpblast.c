// udpblast HOST PORT RATE SECONDS: sends RATE datagrams/s (FortiGate-like line, seq numbered) for SECONDS,
// paced per millisecond with sendmmsg batches. Prints the number sent.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  if (argc < 5) return 2;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(atoi(argv[2])); inet_pton(AF_INET, argv[1], &a.sin_addr);
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) { perror("connect"); return 1; }
  long rate = atol(argv[3]); double secs = atof(argv[4]);
  enum { B = 256 }; static char buf[B][800]; struct mmsghdr m[B]; struct iovec v[B];
  const char *tmpl = "<189>date=2026-12-03 time=08:20:01 devname=\"FGT-01\" devid=\"FG100F0000000001\" logid=\"0000000013\" type=\"traffic\" subtype=\"forward\" level=\"notice\" vd=\"root\" eventtime=1764750001123456789 tz=\"+0300\" srcip=10.1.2.3 srcport=51514 srcintf=\"port1\" srcintfrole=\"lan\" dstip=93.184.216.34 dstport=443 dstintf=\"wan1\" dstintfrole=\"wan\" srccountry=\"Reserved\" dstcountry=\"United States\" sessionid=123456789 proto=6 action=\"accept\" policyid=12 policytype=\"policy\" poluuid=\"0b1c2d3e-4f50-51e2-a3b4-c5d6e7f80912\" service=\"HTTPS\" trandisp=\"snat\" transip=203.0.113.5 transport=51514 appcat=\"unscanned\" duration=12 sentbyte=4321 rcvdbyte=87654 sentpkt=20 rcvdpkt=70 seq=";
  long sent = 0; double t0 = now(), end = t0 + secs;
  while (now() < end) {
    long due = (long)((now() - t0) * rate) - sent;
    while (due > 0) {
      int n = due > B ? B : (int)due;
      for (int i = 0; i < n; i++) {
        int len = snprintf(buf[i], sizeof buf[i], "%s%ld", tmpl, sent + i);
        v[i].iov_base = buf[i]; v[i].iov_len = len;
        memset(&m[i], 0, sizeof m[i]); m[i].msg_hdr.msg_iov = &v[i]; m[i].msg_hdr.msg_iovlen = 1;
      }
      int r = sendmmsg(fd, m, n, 0);
      if (r <= 0) break;
      sent += r; due -= r;
    }
    usleep(1000);
  }
  printf("%ld\n", sent);
  return 0;
}
