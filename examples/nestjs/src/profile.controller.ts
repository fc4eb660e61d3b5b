import { Controller, Get, UseGuards } from "@nestjs/common";
import type { AccessContext } from "@portcullis/core";
import { Access, PortcullisGuard, Roles } from "./portcullis-guard.js";

/** Routes of the application, behind {@link PortcullisGuard}. */
@Controller("api")
@UseGuards(PortcullisGuard)
export class ProfileController {
  /** Any signed-in user. */
  @Get("profile")
  profile(@Access() access: AccessContext) {
    return { userId: access.userId, roles: access.roles };
  }

  /** Only a user holding the `admin` role. */
  @Get("admin/report")
  @Roles("admin")
  report(@Access() access: AccessContext) {
    return { report: "all good", readBy: access.userId };
  }
}
