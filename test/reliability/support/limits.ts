// Limits that load tests keep to, so that their runtime stays predictable.

/**
 * Services a load test keeps at once. Both clusters serve the service range 10.0.0.0/16 (about 65k ClusterIPs),
 * so this is not a capacity limit but a cost one: every Service is one more object to create, watch and check.
 */
export const MAX_SERVICES = 200;
