import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { SelfUpdateDto } from './dto/self-update.dto';
import { SelfUpdateService } from './self-update.service';

/** #6/#7: self-update status and request (api.md §6.2, for the npm package). */
@Controller('api/v1/admin/self-update')
export class SelfUpdateController {
  constructor(private readonly selfUpdate: SelfUpdateService) {}

  @Get()
  status() {
    return this.selfUpdate.status();
  }

  @Post()
  @HttpCode(202)
  start(@Body() body: SelfUpdateDto) {
    return this.selfUpdate.request(body);
  }
}
