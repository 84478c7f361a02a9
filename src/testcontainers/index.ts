/**
 * A Testcontainers module for the emulator's image (`testcontainers` is an optional peer
 * dependency: only this entry point needs it):
 *
 *   const emulator = await new CloudEmulatorContainer('cloud-emulator:latest').withTimeScale(0).start();
 *   const client = emulator.client();
 *   // ... point the system under test at emulator.getBaseUrl() ...
 *   expect(await client.countRequests({ method: 'POST', path: '/concerto/mpulse/api/annotations/v1' })).toBe(1);
 *   await emulator.stop();
 */
import { resolve } from 'node:path';
import { AbstractStartedContainer, GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { EmulatorClient, type EmulatorClientOptions } from '../client/index.js';
import { PATHS } from '../http/paths.js';

/** The port the emulator listens on inside the container. */
export const CLOUD_EMULATOR_PORT = 8080;

/**
 * The image a container starts from when none is named: `CLOUD_EMULATOR_IMAGE` if set, else
 * `cloud-emulator:latest`, the tag the README builds (`docker build -t cloud-emulator .`).
 */
export function defaultImage(): string {
  return process.env.CLOUD_EMULATOR_IMAGE || 'cloud-emulator:latest';
}

/** Where withFixtures() puts the fixture folder inside the container. */
const FIXTURES_IN_CONTAINER = '/fixtures';

export class CloudEmulatorContainer extends GenericContainer {
  private adminToken: string | undefined;

  constructor(image: string = defaultImage()) {
    super(image);
    this.withExposedPorts(CLOUD_EMULATOR_PORT)
      .withEnvironment({ HOST: '0.0.0.0', PORT: String(CLOUD_EMULATOR_PORT) })
      // The health check is open even with ADMIN_TOKEN set, and answers once the fixtures are loaded.
      .withWaitStrategy(Wait.forHttp(PATHS.health, CLOUD_EMULATOR_PORT).forStatusCode(200))
      .withStartupTimeout(60_000);
  }

  /**
   * Seeds the emulator from a folder of fixture files on this machine instead of the demo
   * seed. The folder is copied into the container (no bind mount), so it also works with a
   * remote Docker host.
   */
  withFixtures(dir: string): this {
    return this.withCopyDirectoriesToContainer([{ source: resolve(dir), target: FIXTURES_IN_CONTAINER }]).withEnvironment({
      FIXTURES_DIR: FIXTURES_IN_CONTAINER,
    });
  }

  /** TIME_SCALE: multiplies every lifecycle duration; 0 makes every transition immediate. */
  withTimeScale(scale: number): this {
    return this.withEnvironment({ TIME_SCALE: String(scale) });
  }

  /** ADMIN_TOKEN: the control API then needs it; the started container's client() sends it. */
  withAdminToken(token: string): this {
    this.adminToken = token;
    return this.withEnvironment({ ADMIN_TOKEN: token });
  }

  override async start(): Promise<StartedCloudEmulatorContainer> {
    return new StartedCloudEmulatorContainer(await super.start(), this.adminToken);
  }
}

export class StartedCloudEmulatorContainer extends AbstractStartedContainer {
  constructor(
    startedTestContainer: StartedTestContainer,
    private readonly adminToken: string | undefined,
  ) {
    super(startedTestContainer);
  }

  /** The emulator's port on this machine. */
  getPort(): number {
    return this.getMappedPort(CLOUD_EMULATOR_PORT);
  }

  /** Base URL of the emulator from this machine, e.g. http://localhost:32771 (no trailing slash). */
  getBaseUrl(): string {
    const host = this.getHost();
    return `http://${host.includes(':') ? `[${host}]` : host}:${this.getPort()}`;
  }

  /** A control client of this emulator, with the admin token given to withAdminToken(). */
  client(options: Omit<EmulatorClientOptions, 'adminToken'> = {}): EmulatorClient {
    return new EmulatorClient(this.getBaseUrl(), { ...options, adminToken: this.adminToken });
  }
}
