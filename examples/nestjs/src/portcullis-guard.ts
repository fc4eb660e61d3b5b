import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import {
  type ArgumentsHost,
  type CanActivate,
  Catch,
  type ExceptionFilter,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  SetMetadata,
  createParamDecorator,
} from "@nestjs/common";
import { HttpAdapterHost, Reflector } from "@nestjs/core";
import { type AccessContext, type Auth, type HttpResponse, authorizeRequest, errorResponse } from "@portcullis/core";

/** The injection token of the application's Portcullis instance. */
export const PORTCULLIS_AUTH = Symbol("PORTCULLIS_AUTH");

const rolesKey = "portcullis:roles";

/**
 * The roles a handler (or every handler of a controller) requires: the user must hold at least
 * one of them, or {@link PortcullisGuard} answers 40300.
 */
export const Roles = (...roles: string[]) => SetMetadata(rolesKey, roles);

/** What the guard sets on the request: the platform's request object, Express's or Fastify's. */
interface GuardedRequest {
  auth?: AccessContext;
  /** Fastify's request keeps Node's message here; Express's request is that message. */
  raw?: IncomingMessage;
  headers: IncomingMessage["headers"];
  socket?: IncomingMessage["socket"];
}

/**
 * A refusal of {@link PortcullisGuard}: an `HttpException` whose response is the Portcullis
 * envelope, so that Nest's own exception handler already answers the same status and body as
 * the adapters' `requireAuth`; {@link PortcullisRefusalFilter} adds the envelope's headers.
 */
export class PortcullisRefusal extends HttpException {
  constructor(readonly answer: HttpResponse) {
    super(JSON.parse(answer.body) as Record<string, unknown>, answer.status);
  }
}

/**
 * Lets a request through only as `requireAuth` of the adapters does (core's
 * `authorizeRequest`: TLS outside loopback, a live bearer token, and a role of `@Roles(...)`
 * when the handler or its controller names some), setting `request.auth`.
 */
@Injectable()
export class PortcullisGuard implements CanActivate {
  constructor(
    @Inject(PORTCULLIS_AUTH) private readonly auth: Auth,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const roles = this.reflector.getAllAndOverride<string[] | undefined>(rolesKey, [context.getHandler(), context.getClass()]);
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const message = request.raw ?? (request as unknown as IncomingMessage);
    try {
      request.auth = await authorizeRequest(
        this.auth,
        {
          header(name) {
            const value = message.headers[name.toLowerCase()];
            return Array.isArray(value) ? value.join(", ") : value;
          },
          peerAddress: message.socket.remoteAddress,
          secure: (message.socket as TLSSocket).encrypted === true,
        },
        roles === undefined ? {} : { roles },
      );
      return true;
    } catch (error) {
      throw new PortcullisRefusal(errorResponse(this.auth, error));
    }
  }
}

/** Answers a {@link PortcullisRefusal} exactly as core wrote it: status, headers and body. */
@Catch(PortcullisRefusal)
export class PortcullisRefusalFilter implements ExceptionFilter<PortcullisRefusal> {
  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  catch(refusal: PortcullisRefusal, host: ArgumentsHost): void {
    const { httpAdapter } = this.adapterHost;
    const response: unknown = host.switchToHttp().getResponse();
    for (const [name, value] of Object.entries(refusal.answer.headers)) httpAdapter.setHeader(response, name, value);
    httpAdapter.reply(response, refusal.answer.body, refusal.answer.status);
  }
}

/** The access context the guard set: `profile(@Access() access: AccessContext)`. */
export const Access = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<GuardedRequest>().auth,
);
