import { type DynamicModule, Module } from "@nestjs/common";
import { APP_FILTER } from "@nestjs/core";
import type { Auth } from "@portcullis/core";
import { PORTCULLIS_AUTH, PortcullisGuard, PortcullisRefusalFilter } from "./portcullis-guard.js";
import { ProfileController } from "./profile.controller.js";

/** The application module; {@link appModule} gives it its Portcullis instance. */
@Module({})
export class AppModule {}

/** The application: its controller, the guard, and the filter that answers the guard's refusals. */
export function appModule(auth: Auth): DynamicModule {
  return {
    module: AppModule,
    controllers: [ProfileController],
    providers: [
      { provide: PORTCULLIS_AUTH, useValue: auth },
      PortcullisGuard,
      { provide: APP_FILTER, useClass: PortcullisRefusalFilter },
    ],
  };
}
