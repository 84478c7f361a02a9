import type { CloudType } from './schemas.js';

/** What a cloud provider hands back for one instance. */
export interface Host {
  vendorID: string;
  privateHostName: string;
  publicHostName: string;
}

/**
 * A small integer hash (a murmur3-style finaliser over the parts). Values must look real and
 * be the same on every run and in every test, so nothing here may be random.
 */
function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Fold numbers wider than 32 bits (epoch milliseconds) in two halves.
    for (const word of [Math.floor(part / 0x1_0000_0000), part >>> 0]) {
      h = Math.imul(h ^ word, 0x85ebca6b);
      h ^= h >>> 13;
      h = Math.imul(h, 0xc2b2ae35);
      h ^= h >>> 16;
    }
  }
  return h >>> 0;
}

/** A stream of deterministic 32-bit words for one seed. */
function words(seed: number[]): () => number {
  let i = 0;
  return () => mix(...seed, i++);
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0').slice(-width);
const octet = (n: number, low = 1, high = 254) => low + (n % (high - low + 1));

/** Public address ranges the providers really use, so the addresses are not obviously fake. */
const FIRST_OCTETS: Record<CloudType, readonly number[]> = {
  EC2: [3, 18, 34, 44, 52, 54],
  EC2_CHINA: [52, 54, 161],
  AZURE: [13, 20, 40, 52],
  COMPUTE_ENGINE: [34, 35],
  RACKSPACE_OPENSTACK: [104, 162, 166],
};

/**
 * The instance id and host names a provider gives an instance, derived from `seed` (a cloud
 * server id, or an RSDB/environment id with its launch time). EC2 follows AWS's own naming:
 * us-east-1 has the legacy `compute-1` and `ec2.internal` domains, every other region its own.
 */
export function hostFor(cloudType: CloudType, region: string, seed: number[]): Host {
  const next = words(seed);
  const firsts = FIRST_OCTETS[cloudType];
  const ip = [firsts[next() % firsts.length], octet(next()), octet(next()), octet(next())];
  const privateIp = [172, 31, octet(next(), 0, 255), octet(next())];
  const dashed = (a: number[]) => a.join('-');
  const label = hex(next(), 8);
  switch (cloudType) {
    case 'EC2': {
      const east = region === 'us-east-1';
      return {
        vendorID: `i-0${hex(next(), 8)}${hex(next(), 8)}`,
        publicHostName: `ec2-${dashed(ip)}.${east ? 'compute-1' : `${region}.compute`}.amazonaws.com`,
        privateHostName: `ip-${dashed(privateIp)}.${east ? 'ec2.internal' : `${region}.compute.internal`}`,
      };
    }
    case 'EC2_CHINA':
      return {
        vendorID: `i-0${hex(next(), 8)}${hex(next(), 8)}`,
        publicHostName: `ec2-${dashed(ip)}.${region}.compute.amazonaws.com.cn`,
        privateHostName: `ip-${dashed(privateIp)}.${region}.compute.internal`,
      };
    case 'AZURE':
      return {
        vendorID: `${hex(next(), 8)}-${hex(next(), 4)}-4${hex(next(), 3)}-a${hex(next(), 3)}-${hex(next(), 4)}${hex(next(), 8)}`,
        publicHostName: `ct-${label}.cloudapp.net`,
        privateHostName: `ct-${label}.${hex(next(), 8)}.internal.cloudapp.net`,
      };
    case 'COMPUTE_ENGINE':
      return {
        // Compute Engine instance ids are 19-digit decimal numbers.
        vendorID: `${1 + (next() % 9)}${String(next() % 1_000_000_000).padStart(9, '0')}${String(next() % 1_000_000_000).padStart(9, '0')}`,
        publicHostName: `${[...ip].reverse().join('.')}.bc.googleusercontent.com`,
        privateHostName: `ct-${label}.${region}.c.cloudtest-grid.internal`,
      };
    case 'RACKSPACE_OPENSTACK':
      return {
        vendorID: `${hex(next(), 8)}-${hex(next(), 4)}-${hex(next(), 4)}-${hex(next(), 4)}-${hex(next(), 4)}${hex(next(), 8)}`,
        publicHostName: `${dashed(ip)}.static.cloud-ips.com`,
        privateHostName: `10-176-${octet(next(), 0, 255)}-${octet(next())}.${region.toLowerCase()}.rackspace.internal`,
      };
  }
}
